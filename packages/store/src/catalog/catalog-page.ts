// One page of the admin catalog view: tables under their schemas, filtered, counted.
import type { RelationName } from '@palisade/core'
import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { type CatalogView, readColumnsOf } from './catalog-view.js'

/** The filters of `GET /datasources/{id}/catalog`. */
export interface CatalogPageFilter {
  /** Only the schema of this upstream name (exact; empty: every schema). */
  schema?: string | undefined
  /** Only tables whose name contains this, case-insensitively (schemas without tables drop out). */
  search?: string | undefined
}

/** Default and cap of `page_size`: a page of tables carries their columns. */
const PAGING = { size: 100, cap: 1000 }

interface Row {
  schema_id: string
  schema_name: string
  schema_alias: string | null
  schema_selected: boolean
  id: string | null
  table_name: string | null
  table_type: string | null
  is_selected: boolean | null
  view_definition: string | null
  view_reads: string | null
  ancestors: string | null
  primary_key: string | null
}

const parsed = <T>(text: string | null): T | null =>
  text === null ? null : (JSON.parse(text) as T | null)

/**
 * Reads one page: entries are tables in schema then name order, and a schema with no stored
 * table is one entry of its own (so it can still be seen and paged to). `total` counts entries.
 */
export async function readCatalogPage(
  db: Db,
  datasourceId: string,
  input: PageInput & CatalogPageFilter,
): Promise<CatalogView & Omit<Page<unknown>, 'data'>> {
  const { page, pageSize, offset } = resolvePage(input, PAGING)
  const pattern = `%${(input.search ?? '').replace(/[\\%_]/g, '\\$&')}%`
  const where = sql.join(
    [
      sql`s.datasource_id = ${datasourceId}`,
      ...(input.schema ? [sql`s.schema_name = ${input.schema}`] : []),
      ...(input.search ? [sql`t.table_name ILIKE ${pattern}`] : []),
    ],
    sql` AND `,
  )
  const from = sql`catalog_schemas s LEFT JOIN catalog_tables t ON t.schema_id = s.id`
  const [rows, [counted]] = await Promise.all([
    rowsOf<Row>(
      db.execute(sql`SELECT s.id AS schema_id, s.schema_name, s.schema_alias,
          s.is_selected AS schema_selected, t.id, t.table_name, t.table_type, t.is_selected,
          t.view_definition, t.view_reads::text AS view_reads, t.ancestors::text AS ancestors,
          t.primary_key::text AS primary_key
        FROM ${from} WHERE ${where}
        ORDER BY s.schema_name, t.table_name NULLS FIRST
        LIMIT ${pageSize} OFFSET ${offset}`),
    ),
    rowsOf<{ n: number }>(db.execute(sql`SELECT count(*)::int AS n FROM ${from} WHERE ${where}`)),
  ])
  const columns = await readColumnsOf(
    db,
    rows.flatMap((r) => (r.id ? [r.id] : [])),
  )
  const schemas: CatalogView['schemas'] = []
  for (const r of rows) {
    let schema = schemas.at(-1)
    if (schema?.id !== r.schema_id) {
      schema = {
        id: r.schema_id,
        schema_name: r.schema_name,
        schema_alias: r.schema_alias,
        is_selected: r.schema_selected,
        tables: [],
      }
      schemas.push(schema)
    }
    if (r.id === null) continue
    schema.tables.push({
      id: r.id,
      table_name: r.table_name ?? '',
      table_type: r.table_type ?? 'TABLE',
      is_selected: r.is_selected ?? false,
      view_definition: r.view_definition,
      view_reads: parsed<RelationName[]>(r.view_reads),
      ancestors: parsed<RelationName[]>(r.ancestors),
      primary_key: parsed<string[]>(r.primary_key),
      columns: columns.get(r.id) ?? [],
    })
  }
  return {
    datasource_id: datasourceId,
    schemas,
    total: counted?.n ?? 0,
    page,
    page_size: pageSize,
  }
}
