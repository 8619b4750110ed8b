import type { Relationship } from '@palisade/store'
import { ApiError } from '../http/api-error.js'
import type { AdminDeps } from '../http/env.js'
import { readForeignKeys, type UpstreamForeignKey } from '../upstream/upstream-catalog.js'
import { openUpstreamReader } from '../upstream/upstream-reader.js'

/** One entry of `GET /datasources/{id}/fk-suggestions` (docs/admin-api.md#relationships-anchors-and-their-checks): a relationship's ends. */
export type FkSuggestion = Omit<
  Relationship,
  'id' | 'data_source_id' | 'created_by' | 'created_at'
> & { constraint_name: string; already_added: boolean }

/** A synchronous admin request: give up sooner than a background job would. */
const TIMEOUTS = { connectMs: 10_000, statementMs: 60_000 }

async function readUpstreamForeignKeys(
  deps: AdminDeps,
  datasourceId: string,
): Promise<UpstreamForeignKey[]> {
  const conn = await deps.store.datasources.getConnection(datasourceId)
  try {
    const reader = await openUpstreamReader(conn, TIMEOUTS)
    try {
      return await readForeignKeys(reader)
    } finally {
      await reader.close()
    }
  } catch (error) {
    // The driver's message stays in the operator log: it may name hosts (docs/admin-api.md#errors).
    deps.logger({
      level: 'warn',
      msg: 'fk-suggestions could not read the upstream',
      datasource_id: datasourceId,
      error: error instanceof Error ? error.message : String(error),
    })
    throw new ApiError(
      502,
      'upstream_error',
      'the upstream database could not be read; test the datasource connection',
    )
  }
}

/**
 * Suggests relationships from the live upstream's single-column foreign keys between exposed
 * tables (docs/admin-api.md#relationships-anchors-and-their-checks); both columns must be in the stored catalog, as creating the
 * relationship requires. `already_added` compares with the stored relationships. Stores nothing.
 */
export async function fkSuggestions(
  deps: AdminDeps,
  datasourceId: string,
): Promise<FkSuggestion[]> {
  const foreignKeys = await readUpstreamForeignKeys(deps, datasourceId)
  const view = await deps.store.catalog.get(datasourceId)
  const exposed = new Map<string, { id: string; columns: Set<string> }>()
  for (const s of view.schemas) {
    if (!s.is_selected) continue
    for (const t of s.tables) {
      if (!t.is_selected) continue
      const columns = new Set(t.columns.map((c) => c.column_name))
      exposed.set(`${s.schema_name}\u0000${t.table_name}`, { id: t.id, columns })
    }
  }
  const added = new Set(
    (await deps.store.relationships.list(datasourceId)).map((r) =>
      [r.child_table_id, r.child_column_name, r.parent_table_id, r.parent_column_name].join(
        '\u0000',
      ),
    ),
  )
  const out: FkSuggestion[] = []
  for (const fk of foreignKeys) {
    const child = exposed.get(`${fk.child_schema_name}\u0000${fk.child_table_name}`)
    const parent = exposed.get(`${fk.parent_schema_name}\u0000${fk.parent_table_name}`)
    if (!child?.columns.has(fk.child_column_name)) continue
    if (!parent?.columns.has(fk.parent_column_name)) continue
    const tuple = [child.id, fk.child_column_name, parent.id, fk.parent_column_name]
    out.push({
      child_table_id: child.id,
      child_schema_name: fk.child_schema_name,
      child_table_name: fk.child_table_name,
      child_column_name: fk.child_column_name,
      parent_table_id: parent.id,
      parent_schema_name: fk.parent_schema_name,
      parent_table_name: fk.parent_table_name,
      parent_column_name: fk.parent_column_name,
      constraint_name: fk.constraint_name,
      already_added: added.has(tuple.join('\u0000')),
    })
  }
  return out
}
