// The stored catalog as the admin API shows it, and the exposed part sessions are built from.
import type { Catalog, CatalogSchema, RelationName, TableKind } from '@palisade/core'
import { and, asc, eq, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { uuidv5 } from '../kernel/ids.js'
import { slicesOf, yieldTurn } from '../kernel/slices.js'
import { catalogColumns, catalogSchemas, catalogTables } from '../tables.js'
import { descendantsIn, withDescendants } from './catalog-descendants.js'
import { idIn } from './catalog-json.js'
import { withTags } from './catalog-tags.js'

/** One upstream column with its selection, as the server read it live (docs/admin-api.md#catalog-discovery). */
export interface SaveColumnInput {
  column_name: string
  ordinal_position: number
  data_type: string
  is_nullable: boolean
  column_default?: string | null
  is_selected?: boolean | null
}

/** One table of a save; `columns` omitted keeps the stored columns. */
export interface SaveTableInput {
  table_name: string
  table_type?: TableKind | null
  is_selected: boolean
  /** Views and materialized views, as discovery read them upstream. */
  view_definition?: string | null
  view_reads?: RelationName[] | null
  /** Tables it inherits from or is a partition of, nearest first, as discovery read them. */
  ancestors?: RelationName[] | null
  /** Tables: the primary key's columns in key order, as discovery read them. */
  primary_key?: string[] | null
  columns?: SaveColumnInput[] | null
}

/** One schema of a save (docs/admin-api.md#catalog-discovery SaveSchema plus column metadata). */
export interface SaveSchemaInput {
  schema_name: string
  schema_alias?: string | null
  is_selected: boolean
  tables: SaveTableInput[]
}

/** The unfiltered admin view of the stored catalog (docs/admin-api.md#catalog-discovery). */
export interface CatalogView {
  datasource_id: string
  schemas: {
    id: string
    schema_name: string
    schema_alias: string | null
    is_selected: boolean
    tables: {
      id: string
      table_name: string
      table_type: string
      is_selected: boolean
      /** Views and materialized views: the definition Palisade expands (null otherwise). */
      view_definition?: string | null
      /** Views and materialized views: every relation they read, through other views too. */
      view_reads?: RelationName[] | null
      /** Tables it inherits from or is a partition of, nearest first (their policies apply). */
      ancestors?: RelationName[] | null
      /** Tables: the primary key's columns in key order. */
      primary_key?: string[] | null
      columns: {
        id: string
        column_name: string
        ordinal_position: number
        data_type: string
        is_nullable: boolean
        column_default: string | null
        is_selected: boolean
      }[]
    }[]
  }[]
}

/** Deterministic catalog ids (docs/resources.md#values): UUIDv5 in the datasource id's namespace. */
export const catalogIds = {
  schema: (ds: string, s: string) => uuidv5(ds, JSON.stringify(['schema', s])),
  table: (ds: string, s: string, t: string) => uuidv5(ds, JSON.stringify(['table', s, t])),
  column: (ds: string, s: string, t: string, c: string) =>
    uuidv5(ds, JSON.stringify(['column', s, t, c])),
}

/**
 * Tables whose columns one read fetches: each answer stays small enough to decode at once, and
 * each statement short (the embedded store runs one at a time).
 */
const COLUMN_READ_TABLES = 200
/** Tables one read of the stored tables fetches. */
const TABLES_PER_PAGE = 2500

/** One stored column as the admin view shows it. */
export type ColumnView = CatalogView['schemas'][number]['tables'][number]['columns'][number]

/**
 * Reads the stored catalog, all objects, sorted (docs/admin-api.md#catalog-discovery);
 * `onProgress` hears how many tables' columns are read so far.
 */
export async function readCatalog(
  db: Db,
  datasourceId: string,
  onProgress?: (done: number, total: number) => void,
): Promise<CatalogView> {
  return assemble(db, datasourceId, (ids) => readColumnsOf(db, ids, onProgress))
}

/** The stored schemas and tables, sorted, each table with no columns. */
export function readOutline(db: Db, datasourceId: string): Promise<CatalogView> {
  return assemble(db, datasourceId, async () => new Map())
}

async function assemble(
  db: Db,
  datasourceId: string,
  columnsOf: (tableIds: string[]) => Promise<Map<string, ColumnView[]>>,
): Promise<CatalogView> {
  const schemas = await db
    .select()
    .from(catalogSchemas)
    .where(eq(catalogSchemas.datasourceId, datasourceId))
    .orderBy(asc(catalogSchemas.schemaName))
  const tables = await readTables(db, datasourceId)
  const columns = await columnsOf(tables.map((t) => t.id))
  const bySchema = new Map<string, typeof tables>()
  for (const t of tables) {
    const list = bySchema.get(t.schemaId)
    if (list) list.push(t)
    else bySchema.set(t.schemaId, [t])
  }
  return {
    datasource_id: datasourceId,
    schemas: schemas.map((s) => ({
      id: s.id,
      schema_name: s.schemaName,
      schema_alias: s.schemaAlias,
      is_selected: s.isSelected,
      tables: (bySchema.get(s.id) ?? []).map((t) => ({
        id: t.id,
        table_name: t.tableName,
        table_type: t.tableType,
        is_selected: t.isSelected,
        view_definition: t.viewDefinition,
        view_reads: t.viewReads,
        ancestors: t.ancestors,
        primary_key: t.primaryKey,
        columns: columns.get(t.id) ?? [],
      })),
    })),
  }
}

type TableRow = typeof catalogTables.$inferSelect

/**
 * The datasource's stored tables by name, a page per statement: the embedded store runs one
 * statement at a time, and 10,000 tables in one held it for over 100 ms.
 */
async function readTables(db: Db, datasourceId: string): Promise<TableRow[]> {
  const tables: TableRow[] = []
  for (;;) {
    const last = tables.at(-1)
    const page = await db
      .select()
      .from(catalogTables)
      .where(
        and(
          eq(catalogTables.datasourceId, datasourceId),
          last
            ? sql`(${catalogTables.tableName}, ${catalogTables.id}) > (${last.tableName}, ${last.id}::uuid)`
            : undefined,
        ),
      )
      .orderBy(asc(catalogTables.tableName), asc(catalogTables.id))
      .limit(TABLES_PER_PAGE)
    tables.push(...page)
    if (page.length < TABLES_PER_PAGE) return tables
    await yieldTurn()
  }
}

/**
 * The stored columns of the given tables in column order, by table id; read a slice of tables
 * at a time, with a turn for other work between slices.
 */
export async function readColumnsOf(
  db: Db,
  tableIds: readonly string[],
  onProgress?: (done: number, total: number) => void,
): Promise<Map<string, ColumnView[]>> {
  const out = new Map<string, ColumnView[]>()
  let done = 0
  for (const slice of slicesOf(tableIds, COLUMN_READ_TABLES)) {
    const rows = await db
      .select()
      .from(catalogColumns)
      .where(idIn(catalogColumns.tableId, slice))
      .orderBy(asc(catalogColumns.tableId), asc(catalogColumns.ordinalPosition))
    for (const c of rows) {
      const column = {
        id: c.id,
        column_name: c.columnName,
        ordinal_position: c.ordinalPosition,
        data_type: c.dataType,
        is_nullable: c.isNullable,
        column_default: c.columnDefault,
        is_selected: c.isSelected,
      }
      const list = out.get(c.tableId)
      if (list) list.push(column)
      else out.set(c.tableId, [column])
    }
    done += slice.length
    onProgress?.(done, tableIds.length)
    await yieldTurn()
  }
  return out
}

/** Only exposed objects (docs/admin-api.md#catalog-discovery): selected schema, selected table, selected column. */
export function exposedOf(view: CatalogView): Catalog {
  const schemas: CatalogSchema[] = view.schemas
    .filter((s) => s.is_selected)
    .map((s) => ({
      name: s.schema_name,
      alias: s.schema_alias || null,
      tables: s.tables
        .filter((t) => t.is_selected)
        .map((t) => ({
          name: t.table_name,
          kind: t.table_type as TableKind,
          ...(t.view_definition ? { definition: t.view_definition } : {}),
          ...(t.view_reads ? { reads: t.view_reads } : {}),
          ...(t.ancestors && t.ancestors.length > 0 ? { ancestors: t.ancestors } : {}),
          ...exposedKey(t),
          columns: t.columns
            .filter((c) => c.is_selected)
            .map((c) => ({ name: c.column_name, type: c.data_type, nullable: c.is_nullable })),
        })),
    }))
  return { schemas: withDescendants(schemas, descendantsIn(view)) }
}

/** A table's primary key, when every column of it is exposed (else no key is known to users). */
function exposedKey(table: CatalogView['schemas'][number]['tables'][number]): {
  primaryKey?: string[]
} {
  const key = table.primary_key
  if (!key || key.length === 0) return {}
  const exposed = new Set(table.columns.filter((c) => c.is_selected).map((c) => c.column_name))
  return key.every((c) => exposed.has(c)) ? { primaryKey: key } : {}
}

/** The exposed catalog of one datasource, for session contexts. */
export async function readExposedCatalog(db: Db, datasourceId: string): Promise<Catalog> {
  return withTags(db, datasourceId, exposedOf(await readCatalog(db, datasourceId)))
}
