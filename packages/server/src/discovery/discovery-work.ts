import type { SaveSchemaInput, UpstreamColumn } from '@palisade/store'
import { classifyDatasource } from '../classification/classify.js'
import type { AdminDeps } from '../http/env.js'
import type { DiscoverRequest } from '../http/schemas/discovery.js'
import {
  readColumns,
  readRelations,
  readSchemas,
  readTables,
  type UpstreamRelation,
} from '../upstream/upstream-catalog.js'
import {
  DISCOVERY_TIMEOUTS,
  openUpstreamReader,
  type UpstreamReader,
} from '../upstream/upstream-reader.js'
import type { DiscoveryJobControl } from './discovery-jobs.js'

type Work = (control: DiscoveryJobControl) => Promise<unknown>
type SaveRequest = Extract<DiscoverRequest, { action: 'save_catalog' }>

const key = (schema: string, table: string) => `${schema}\u0000${table}`

/** Runs `read` on a fresh upstream connection of the datasource, closed afterwards. */
async function withUpstream<T>(
  deps: AdminDeps,
  datasourceId: string,
  signal: AbortSignal,
  read: (reader: UpstreamReader) => Promise<T>,
): Promise<T> {
  const conn = await deps.store.datasources.getConnection(datasourceId)
  const reader = await openUpstreamReader(conn, DISCOVERY_TIMEOUTS, signal)
  try {
    return await read(reader)
  } finally {
    await reader.close()
  }
}

/**
 * The work of one discovery job (docs/admin-api.md#catalog-discovery). The three discover actions only read;
 * `is_already_selected` is computed against the stored catalog read after the upstream.
 * `save_catalog` and `sync_catalog` read the upstream, then write through the store, which
 * audits them as the admin who submitted the job.
 */
export function discoveryWork(
  deps: AdminDeps,
  datasourceId: string,
  actorId: string,
  request: DiscoverRequest,
): Work {
  const { catalog } = deps.store
  switch (request.action) {
    case 'discover_schemas':
      return async ({ signal }) => {
        const names = await withUpstream(deps, datasourceId, signal, readSchemas)
        const stored = new Map(
          (await catalog.outline(datasourceId)).schemas.map((s) => [s.schema_name, s]),
        )
        return names.map((schema_name) => ({
          schema_name,
          schema_alias: stored.get(schema_name)?.schema_alias ?? null,
          is_already_selected: stored.get(schema_name)?.is_selected ?? false,
        }))
      }
    case 'discover_tables':
      return async ({ signal }) => {
        const tables = await withUpstream(deps, datasourceId, signal, (r) =>
          readTables(r, [...new Set(request.schemas)]),
        )
        const stored = new Map<string, boolean>()
        for (const s of (await catalog.outline(datasourceId)).schemas) {
          for (const t of s.tables) stored.set(key(s.schema_name, t.table_name), t.is_selected)
        }
        return tables.map((t) => ({
          ...t,
          is_already_selected: stored.get(key(t.schema_name, t.table_name)) ?? false,
        }))
      }
    case 'discover_columns':
      return async ({ signal }) => {
        const columns = await withUpstream(deps, datasourceId, signal, (r) =>
          readColumns(r, request.tables),
        )
        const stored = new Map<string, boolean>()
        for (const s of (await catalog.get(datasourceId)).schemas) {
          for (const t of s.tables) {
            for (const c of t.columns) {
              stored.set(key(key(s.schema_name, t.table_name), c.column_name), c.is_selected)
            }
          }
        }
        // A column not yet stored would be saved as selected, so it reports true.
        return columns.map((c) => ({
          ...c,
          is_already_selected:
            stored.get(key(key(c.schema_name, c.table_name), c.column_name)) ?? true,
        }))
      }
    case 'save_catalog':
      return async (control) => {
        const total = request.schemas.reduce((n, s) => n + s.tables.length, 0)
        control.progress(0, total)
        const schemas = await withUpstream(deps, datasourceId, control.signal, (r) =>
          readSelection(r, request),
        )
        if (!control.beginCommit()) return null
        const saved = await catalog.saveCatalog(datasourceId, schemas, actorId, {
          onProgress: control.progress,
        })
        control.progress(total, total)
        await readyForLogins(deps, datasourceId)
        await proposeTags(deps, datasourceId, actorId)
        return saved
      }
    case 'sync_catalog':
      return async (control) => {
        const view = await catalog.outline(datasourceId)
        const total = view.schemas.reduce((n, s) => n + s.tables.length, 0)
        control.progress(0, total)
        const exposed = view.schemas
          .filter((s) => s.is_selected)
          .flatMap((s) =>
            s.tables
              .filter((t) => t.is_selected)
              .map((t) => ({ schema: s.schema_name, table: t.table_name })),
          )
        const snapshot = await withUpstream(deps, datasourceId, control.signal, async (r) => {
          const schemas = await readSchemas(r)
          const tables = await readRelations(
            r,
            view.schemas.map((s) => s.schema_name),
          )
          const live = new Set(tables.map((t) => key(t.schema_name, t.table_name)))
          const read = exposed.filter((t) => live.has(key(t.schema, t.table)))
          const columns = await readColumns(r, read)
          const column_tables = read.map((t) => ({ schema_name: t.schema, table_name: t.table }))
          return { schemas, tables, column_tables, columns }
        })
        if (!control.beginCommit()) return null
        const report = await catalog.syncCatalog(datasourceId, snapshot, actorId, {
          onProgress: control.progress,
        })
        control.progress(total, total)
        await readyForLogins(deps, datasourceId)
        // Only new or changed columns can give the classifier something new to propose.
        if (report.added_columns.length > 0 || report.changed_columns.length > 0) {
          await proposeTags(deps, datasourceId, actorId)
        }
        return report
      }
  }
}

/**
 * Has the session catalog of the new version made before the job reports done (patched where
 * the change allows), also before any session used the datasource, and its upstream pool open,
 * so the first login after the job waits for neither. Best effort: a login does both anyway.
 */
async function readyForLogins(deps: AdminDeps, datasourceId: string): Promise<void> {
  await Promise.all([
    deps.store.sessions.prepare(datasourceId).catch(() => {}),
    deps.onCatalogReady?.(datasourceId).catch(() => {}),
  ])
}

/**
 * Classifies the saved or synced catalog (docs/policies.md, "Classification"). The catalog is
 * already committed: a classification that fails is logged, and the job still succeeds.
 */
async function proposeTags(deps: AdminDeps, datasourceId: string, actorId: string): Promise<void> {
  try {
    await classifyDatasource(deps.store, datasourceId, actorId)
  } catch (error) {
    deps.logger({
      level: 'warn',
      msg: 'classification failed',
      datasource_id: datasourceId,
      error: (error as Error).message,
    })
  }
}

/**
 * Completes a `save_catalog` selection with live metadata: the columns of every selected table
 * in a selected schema (docs/admin-api.md#catalog-discovery step 4), and table types the request left out. A
 * selected table that does not exist upstream fails the job.
 */
async function readSelection(
  reader: UpstreamReader,
  request: SaveRequest,
): Promise<SaveSchemaInput[]> {
  const live = new Map<string, UpstreamRelation>(
    (await readRelations(reader, [...new Set(request.schemas.map((s) => s.schema_name))])).map(
      (t) => [key(t.schema_name, t.table_name), t],
    ),
  )
  const selected = request.schemas
    .filter((s) => s.is_selected)
    .flatMap((s) =>
      s.tables
        .filter((t) => t.is_selected)
        .map((t) => ({ schema: s.schema_name, table: t.table_name })),
    )
  const missing = selected.filter((t) => !live.has(key(t.schema, t.table)))
  if (missing.length > 0) {
    const names = missing.map((t) => `${t.schema}.${t.table}`).join(', ')
    throw new Error(`selected tables do not exist upstream: ${names}`)
  }
  const columns = new Map<string, UpstreamColumn[]>()
  for (const c of await readColumns(reader, selected)) {
    const k = key(c.schema_name, c.table_name)
    const list = columns.get(k)
    if (list) list.push(c)
    else columns.set(k, [c])
  }
  return request.schemas.map((s) => ({
    schema_name: s.schema_name,
    schema_alias: s.schema_alias ?? null,
    is_selected: s.is_selected,
    tables: s.tables.map((t) => {
      const k = key(s.schema_name, t.table_name)
      const read = s.is_selected && t.is_selected
      const choice = new Map((t.columns ?? []).map((c) => [c.column_name, c.is_selected]))
      const relation = live.get(k)
      return {
        table_name: t.table_name,
        table_type: relation?.table_type ?? t.table_type ?? 'TABLE',
        is_selected: t.is_selected,
        view_definition: relation?.view_definition ?? null,
        view_reads: relation?.view_reads ?? null,
        ancestors: relation?.ancestors ?? null,
        primary_key: relation?.primary_key ?? null,
        columns: read
          ? (columns.get(k) ?? []).map((c) => ({
              column_name: c.column_name,
              ordinal_position: c.ordinal_position,
              data_type: c.data_type,
              is_nullable: c.is_nullable,
              column_default: c.column_default,
              is_selected: choice.get(c.column_name) ?? true,
            }))
          : null,
      }
    }),
  }))
}
