// What of a stored catalog sessions see, reduced to what an audit entry and an invalidation compare.
import type { RelationName } from '@palisade/core'
import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import { idIn } from './catalog-json.js'
import type { SelectionRows } from './catalog-selection.js'

/** The exposed part of a stored catalog, one entry per exposed table (upstream names). */
export interface Exposure {
  /** Exposed schemas: their alias, or null. */
  aliases: Map<string, string | null>
  /** `schema.table` of each exposed table: its exposed columns in column order. */
  tables: Map<string, string[]>
  /** `schema.table` of each exposed table: its kind, definition, reads, ancestors and usable key. */
  definitions: Map<string, string>
}

interface Row {
  schema_name: string
  table_name: string
  table_type: string
  view_definition: string | null
  view_reads: string | null
  ancestors: string | null
  primary_key: string | null
  columns: string
}

/**
 * Reads the exposure of a datasource's stored catalog with one aggregate per table (no column
 * rows cross to this thread), or of the given tables only.
 */
export async function readExposure(
  db: Db,
  datasourceId: string,
  tableIds?: readonly string[],
): Promise<Exposure> {
  const schemas = await rowsOf<{ schema_name: string; schema_alias: string | null }>(
    db.execute(sql`SELECT schema_name, schema_alias FROM catalog_schemas
      WHERE datasource_id = ${datasourceId} AND is_selected`),
  )
  const only = tableIds ? sql`AND ${idIn(sql.raw('t.id'), tableIds)}` : sql``
  const rows =
    tableIds?.length === 0
      ? []
      : await rowsOf<Row>(
          db.execute(sql`SELECT s.schema_name, t.table_name, t.table_type, t.view_definition,
              t.view_reads::text AS view_reads, t.ancestors::text AS ancestors,
              t.primary_key::text AS primary_key,
              coalesce(json_agg(c.column_name ORDER BY c.ordinal_position)
                FILTER (WHERE c.is_selected), '[]')::text AS columns
            FROM catalog_schemas s
            JOIN catalog_tables t ON t.schema_id = s.id AND t.is_selected
            LEFT JOIN catalog_columns c ON c.table_id = t.id
            WHERE s.datasource_id = ${datasourceId} AND s.is_selected ${only}
            GROUP BY s.schema_name, t.id`),
        )
  const out: Exposure = {
    aliases: new Map(schemas.map((s) => [s.schema_name, s.schema_alias || null])),
    tables: new Map(),
    definitions: new Map(),
  }
  for (const r of rows) {
    const key = `${r.schema_name}.${r.table_name}`
    const columns = JSON.parse(r.columns) as string[]
    out.tables.set(key, columns)
    out.definitions.set(
      key,
      definitionOf(
        r.table_type,
        r.view_definition,
        parsed(r.view_reads),
        parsed(r.ancestors),
        parsed(r.primary_key),
        columns,
      ),
    )
  }
  return out
}

/**
 * An exposed relation's kind, definition, reads, ancestors and usable key as one comparable
 * string: the facts `exposedOf` hands sessions (a key only when all its columns are exposed).
 */
export function definitionOf(
  kind: string,
  definition: string | null,
  reads: readonly RelationName[] | null,
  ancestors: readonly RelationName[] | null,
  primaryKey: readonly string[] | null,
  exposedColumns: readonly string[],
): string {
  // Pairs, not objects: jsonb reorders an object's keys, so the same names must compare equal.
  const pairs = (list: readonly RelationName[] | null) =>
    list && list.length > 0 ? list.map((r) => [r.schema, r.table]) : null
  const usableKey =
    primaryKey && primaryKey.length > 0 && primaryKey.every((c) => exposedColumns.includes(c))
      ? primaryKey
      : null
  return JSON.stringify([
    kind,
    definition || null,
    reads ? (pairs(reads) ?? []) : null,
    pairs(ancestors),
    usableKey,
  ])
}

function parsed<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T | null)
}

/**
 * The exposure a saved selection leaves, worked out from its rows: every stored table is in
 * them (the others are removed). Tables whose columns or definitions the save kept as stored
 * are returned in `unread`, for `readExposure` to fill in.
 */
export function exposureOfSelection(rows: SelectionRows): { exposure: Exposure; unread: string[] } {
  const exposure: Exposure = { aliases: new Map(), tables: new Map(), definitions: new Map() }
  const unread: string[] = []
  const schemas = new Map(rows.schemas.map((s) => [s.id, s]))
  for (const s of rows.schemas) {
    if (s.is_selected) exposure.aliases.set(s.schema_name, s.schema_alias || null)
  }
  for (const { row, columns } of rows.tables) {
    const schema = schemas.get(row.schema_id)
    if (!schema?.is_selected || !row.is_selected) continue
    if (!columns || !row.set_definition || !row.set_ancestors || !row.set_key) {
      unread.push(row.id)
      continue
    }
    const exposed = columns
      .filter((c) => c.is_selected !== false)
      .sort((a, b) => a.ordinal_position - b.ordinal_position)
      .map((c) => c.column_name)
    const key = `${schema.schema_name}.${row.table_name}`
    exposure.tables.set(key, exposed)
    exposure.definitions.set(
      key,
      definitionOf(
        row.table_type,
        row.view_definition,
        row.view_reads,
        row.ancestors,
        row.primary_key,
        exposed,
      ),
    )
  }
  return { exposure, unread }
}
