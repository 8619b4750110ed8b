import type { Catalog, CatalogSchema, CatalogTable, RelationName, TableKind } from '@palisade/core'
import { sql } from 'drizzle-orm'
import { readDescendants, withDescendants } from '../catalog/catalog-descendants.js'
import { jsonRows } from '../catalog/catalog-json.js'
import { withTags } from '../catalog/catalog-tags.js'
import type { EditedRelation } from '../kernel/catalog-edit.js'
import { type Db, rowsOf } from '../kernel/db.js'
import { slicesOf } from '../kernel/slices.js'

/** Longest the parse of a large catalog holds the thread before it lets other work run. */
const SLICE_MS = 5

interface Row {
  schema_name: string
  schema_alias: string | null
  /** One exposed table as a JSON array (below), or null for a schema without one. */
  doc: string | null
}

type TableDoc = [
  name: string,
  kind: string,
  definition: string | null,
  reads: RelationName[] | null,
  ancestors: RelationName[] | null,
  primaryKey: string[] | null,
  columns: [name: string, type: string, nullable: boolean][],
]

/** Exposed tables one statement reads: each statement stays short (about 40 ms at 1,000). */
const TABLES_PER_READ = 1000
/** Chunked reads redone when a catalog change committed meanwhile, before one is kept as is. */
const CHUNKED_ATTEMPTS = 3

/**
 * The exposed catalog a session is built from (what `readExposedCatalog` returns), read for
 * sessions: the store's database selects, orders and groups the exposed objects, one row per
 * table, and the rows are parsed a slice at a time. A large catalog is read a thousand tables
 * per statement: the embedded store runs one statement at a time, and a login, an admin request
 * or the audit waits only for the statement running when it arrives (10,000 tables in one
 * statement held it for 360 ms). `only`: those tables alone (each exposed schema is still
 * listed, maybe without tables).
 */
export async function readSessionCatalog(
  db: Db,
  datasourceId: string,
  only?: readonly EditedRelation[],
): Promise<Catalog> {
  const schemas = await readChunked(db, datasourceId, only)
  const descendants = await readDescendants(db, datasourceId)
  return withTags(db, datasourceId, { schemas: withDescendants(schemas, descendants) })
}

/**
 * The exposed schemas with their tables (every exposed one, or those of `only`), a chunk of
 * tables per statement, in the order one statement would give. Each table is read whole by one
 * statement; when a catalog change commits between the chunks, the read is done again so that
 * it shows one version (after a few tries it is kept: the change's notice has the catalog read
 * again anyway).
 */
async function readChunked(
  db: Db,
  datasourceId: string,
  only: readonly EditedRelation[] | undefined,
): Promise<CatalogSchema[]> {
  if (only && only.length <= TABLES_PER_READ) return readSchemas(db, datasourceId, only)
  for (let attempt = 1; ; attempt++) {
    const version = await catalogVersion(db, datasourceId)
    const tables = only ?? (await exposedTables(db, datasourceId))
    if (tables.length <= TABLES_PER_READ) return readSchemas(db, datasourceId, only)
    const merged = new Map<string, { name: string; alias: string | null; tables: CatalogTable[] }>()
    for (const chunk of slicesOf(tables, TABLES_PER_READ)) {
      for (const schema of await readSchemas(db, datasourceId, chunk)) {
        const known = merged.get(schema.name)
        if (known) known.tables.push(...schema.tables)
        else
          merged.set(schema.name, {
            name: schema.name,
            alias: schema.alias ?? null,
            tables: [...schema.tables],
          })
      }
    }
    if (attempt >= CHUNKED_ATTEMPTS || (await catalogVersion(db, datasourceId)) === version) {
      return [...merged.values()]
    }
  }
}

/** The datasource's exposed tables, in the catalog's order. */
function exposedTables(db: Db, datasourceId: string): Promise<EditedRelation[]> {
  return rowsOf<EditedRelation>(
    db.execute(sql`
      SELECT s.schema_name AS schema, t.table_name AS "table"
      FROM catalog_schemas s JOIN catalog_tables t ON t.schema_id = s.id AND t.is_selected
      WHERE s.datasource_id = ${datasourceId} AND s.is_selected
      ORDER BY s.schema_name, t.table_name`),
  )
}

async function catalogVersion(db: Db, datasourceId: string): Promise<number | undefined> {
  const [row] = await rowsOf<{ catalog_version: number }>(
    db.execute(sql`SELECT catalog_version FROM datasources WHERE id = ${datasourceId}`),
  )
  return row?.catalog_version
}

/** The exposed schemas with their exposed tables (those of `only`, when given), one statement. */
async function readSchemas(
  db: Db,
  datasourceId: string,
  only?: readonly EditedRelation[],
): Promise<CatalogSchema[]> {
  const onlyThese = only
    ? sql`AND (s.schema_name, t.table_name) IN (SELECT x.schema, x."table"
        FROM json_to_recordset(${jsonRows(only)}) AS x(schema text, "table" text))`
    : sql``
  const rows = await rowsOf<Row>(
    db.execute(sql`
      SELECT s.schema_name, s.schema_alias, t.doc
      FROM catalog_schemas s
      LEFT JOIN LATERAL (
        SELECT t.table_name, json_build_array(
          t.table_name, t.table_type, t.view_definition, t.view_reads, t.ancestors, t.primary_key,
          (SELECT coalesce(json_agg(json_build_array(c.column_name, c.data_type, c.is_nullable)
             ORDER BY c.ordinal_position), '[]'::json)
           FROM catalog_columns c WHERE c.table_id = t.id AND c.is_selected))::text AS doc
        FROM catalog_tables t WHERE t.schema_id = s.id AND t.is_selected ${onlyThese}
      ) t ON true
      WHERE s.datasource_id = ${datasourceId} AND s.is_selected
      ORDER BY s.schema_name, t.table_name`),
  )
  const schemas: CatalogSchema[] = []
  let current: { name: string; alias: string | null; tables: CatalogTable[] } | undefined
  let sliceStart = performance.now()
  for (const row of rows) {
    if (current?.name !== row.schema_name) {
      current = { name: row.schema_name, alias: row.schema_alias || null, tables: [] }
      schemas.push(current)
    }
    if (row.doc !== null) current.tables.push(tableOf(JSON.parse(row.doc) as TableDoc))
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
  }
  return schemas
}

/** One exposed table, shaped as `exposedOf` (catalog-view.ts) shapes it. */
function tableOf(doc: TableDoc): CatalogTable {
  const [name, kind, definition, reads, ancestors, primaryKey, columns] = doc
  const exposed = columns.map(([column, type, nullable]) => ({ name: column, type, nullable }))
  // A primary key is known to users only when every column of it is exposed.
  const names = new Set(exposed.map((c) => c.name))
  const keyShown = !!primaryKey && primaryKey.length > 0 && primaryKey.every((c) => names.has(c))
  return {
    name,
    kind: kind as TableKind,
    ...(definition ? { definition } : {}),
    ...(reads ? { reads } : {}),
    ...(ancestors && ancestors.length > 0 ? { ancestors } : {}),
    ...(keyShown ? { primaryKey } : {}),
    columns: exposed,
  }
}
