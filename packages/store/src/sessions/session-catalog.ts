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
  /** One exposed table's stored document (below), or null for a schema without one. */
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

/** Exposed tables one statement reads: each statement stays short (10-20 ms at 1,000). */
const TABLES_PER_READ = 1000
/** Chunked reads redone when a catalog change committed meanwhile, before one is kept as is. */
const CHUNKED_ATTEMPTS = 3

/**
 * The exposed catalog a session is built from (what `readExposedCatalog` returns), read for
 * sessions: each exposed table's document, kept in the store by triggers as the catalog is
 * written (migration 0021), is read in the catalog's order and parsed a slice at a time. A large
 * catalog is read a thousand tables per statement: the embedded store runs one statement at a
 * time, and a login, an admin request or the audit waits only for the statement running when it
 * arrives. `only`: those tables alone (each exposed schema is still listed, maybe without
 * tables).
 */
export async function readSessionCatalog(
  db: Db,
  datasourceId: string,
  only?: readonly EditedRelation[],
): Promise<Catalog> {
  // A few tables (a sync's or a tag's) are one statement: nothing to keep in one version.
  const schemas =
    only && only.length <= TABLES_PER_READ
      ? await readSchemas(db, datasourceId, only)
      : await readOneVersion(db, datasourceId, () =>
          only ? readNamed(db, datasourceId, only) : readAll(db, datasourceId),
        )
  const descendants = await readDescendants(db, datasourceId)
  return withTags(db, datasourceId, { schemas: withDescendants(schemas, descendants) })
}

/** What a read in chunks answers: the schemas, and whether it took more than one statement. */
interface ChunkedRead {
  schemas: CatalogSchema[]
  chunked: boolean
}

/**
 * Each table is read whole by one statement; when a catalog change commits between the chunks
 * of one read, the read is done again so that it shows one version (after a few tries it is
 * kept: the change's notice has the catalog read again anyway).
 */
async function readOneVersion(
  db: Db,
  datasourceId: string,
  read: () => Promise<ChunkedRead>,
): Promise<CatalogSchema[]> {
  for (let attempt = 1; ; attempt++) {
    const version = await catalogVersion(db, datasourceId)
    const { schemas, chunked } = await read()
    if (!chunked || attempt >= CHUNKED_ATTEMPTS) return schemas
    if ((await catalogVersion(db, datasourceId)) === version) return schemas
  }
}

type SchemaBuild = { name: string; alias: string | null; tables: CatalogTable[] }

/**
 * Every exposed schema and table: the schemas in one statement, then the tables a chunk at a
 * time in name order, each chunk starting after the last name of the one before (the name index
 * of each schema finds it). A chunk comes back as one JSON text of `[schema, table, document]`:
 * the embedded store hands over one long text far faster than a thousand rows.
 */
async function readAll(db: Db, datasourceId: string): Promise<ChunkedRead> {
  const listed = await rowsOf<{ schema_name: string; schema_alias: string | null }>(
    db.execute(sql`SELECT schema_name, schema_alias FROM catalog_schemas
      WHERE datasource_id = ${datasourceId} AND is_selected ORDER BY schema_name`),
  )
  const bySchema = new Map<string, SchemaBuild>(
    listed.map((s) => [
      s.schema_name,
      { name: s.schema_name, alias: s.schema_alias || null, tables: [] },
    ]),
  )
  let after = { schema: '', table: '' }
  let statements = 0
  for (;;) {
    const [chunk] = await rowsOf<{ docs: string | null }>(
      db.execute(sql`
        SELECT '[' || string_agg('[' || to_json(x.schema_name)::text || ','
            || to_json(x.table_name)::text || ',' || coalesce(x.doc, 'null') || ']', ','
          ORDER BY x.schema_name, x.table_name) || ']' AS docs
        FROM (SELECT s.schema_name, t.table_name, t.doc
          FROM catalog_schemas s CROSS JOIN LATERAL (
            SELECT t.table_name, t.session_doc AS doc FROM catalog_tables t
            WHERE t.schema_id = s.id AND t.is_selected
              AND t.table_name > (CASE WHEN s.schema_name = ${after.schema}
                THEN ${after.table} ELSE '' END)
            ORDER BY t.table_name LIMIT ${TABLES_PER_READ}) t
          WHERE s.datasource_id = ${datasourceId} AND s.is_selected
            AND s.schema_name >= ${after.schema}
          ORDER BY s.schema_name, t.table_name LIMIT ${TABLES_PER_READ}) x`),
    )
    statements++
    const read = chunk?.docs ? (JSON.parse(chunk.docs) as [string, string, TableDoc | null][]) : []
    await parseInSlices(read, ([schema, , doc]) => {
      // Triggers keep every document; one missing would leave its table out, never show it stale.
      if (doc) bySchema.get(schema)?.tables.push(tableOf(doc))
    })
    const last = read.at(-1)
    if (!last || read.length < TABLES_PER_READ) break
    after = { schema: last[0], table: last[1] }
  }
  return { schemas: [...bySchema.values()], chunked: statements > 1 }
}

/** The tables of `only` (and every exposed schema), a chunk of names per statement. */
async function readNamed(
  db: Db,
  datasourceId: string,
  only: readonly EditedRelation[],
): Promise<ChunkedRead> {
  const merged = new Map<string, SchemaBuild>()
  const chunks = slicesOf(only, TABLES_PER_READ)
  for (const chunk of chunks) {
    for (const schema of await readSchemas(db, datasourceId, chunk)) {
      const known = merged.get(schema.name)
      if (known) known.tables.push(...schema.tables)
      else merged.set(schema.name, schema)
    }
  }
  return { schemas: [...merged.values()], chunked: chunks.length > 1 }
}

async function catalogVersion(db: Db, datasourceId: string): Promise<number | undefined> {
  const [row] = await rowsOf<{ catalog_version: number }>(
    db.execute(sql`SELECT catalog_version FROM datasources WHERE id = ${datasourceId}`),
  )
  return row?.catalog_version
}

/** The exposed schemas with those of their exposed tables that `only` names, one statement. */
async function readSchemas(
  db: Db,
  datasourceId: string,
  only: readonly EditedRelation[],
): Promise<SchemaBuild[]> {
  const rows = await rowsOf<Row>(
    db.execute(sql`
      SELECT s.schema_name, s.schema_alias, t.session_doc AS doc
      FROM catalog_schemas s
      LEFT JOIN catalog_tables t ON t.schema_id = s.id AND t.is_selected
        AND (s.schema_name, t.table_name) IN (SELECT x.schema, x."table"
          FROM json_to_recordset(${jsonRows(only)}) AS x(schema text, "table" text))
      WHERE s.datasource_id = ${datasourceId} AND s.is_selected
      ORDER BY s.schema_name, t.table_name`),
  )
  const schemas: SchemaBuild[] = []
  await parseInSlices(rows, (row) => {
    let current = schemas.at(-1)
    if (current?.name !== row.schema_name) {
      current = { name: row.schema_name, alias: row.schema_alias || null, tables: [] }
      schemas.push(current)
    }
    if (row.doc !== null) current.tables.push(tableOf(row.doc))
  })
  return schemas
}

/** Hands each row to `take`, letting other work run every few milliseconds of it. */
async function parseInSlices<R>(rows: readonly R[], take: (row: R) => void): Promise<void> {
  let sliceStart = performance.now()
  for (const row of rows) {
    take(row)
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
  }
}

/** One exposed table from its stored document, shaped as `exposedOf` (catalog-view.ts) shapes it. */
function tableOf(stored: string | TableDoc): CatalogTable {
  const [name, kind, definition, reads, ancestors, primaryKey, columns] =
    typeof stored === 'string' ? (JSON.parse(stored) as TableDoc) : stored
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
