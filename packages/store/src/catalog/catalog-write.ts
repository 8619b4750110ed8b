// Writing a catalog selection in bulk: rows kept, added and removed, and what depended on removed tables.
import { and, eq, inArray, not, or, sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import type { Mutation } from '../kernel/mutation.js'
import { slicesOf } from '../kernel/slices.js'
import { anchorSnapshot, relationshipSnapshot } from '../relationships/relationship-rows.js'
import { catalogSchemas, catalogTables, columnAnchors, tableRelationships } from '../tables.js'
import { idIn, jsonRows } from './catalog-json.js'
import type { ColumnRow, SelectionRows, TableRow } from './catalog-selection.js'

/** Tables (with their columns) written by one statement: about ten thousand rows. */
const TABLES_PER_STATEMENT = 1000

/** Called after each slice of tables is written: how many of `total` are done. */
export type ProgressListener = (done: number, total: number) => void

/** Tables (with their columns) one staging statement writes: a short statement each. */
const TABLES_PER_STAGE = 100

/** The schemas and tables a save stored ahead of its transaction, hidden. */
export interface Staged {
  /** New schemas, stored unselected. */
  schemas: ReadonlySet<string>
  /** New tables with their columns. */
  tables: ReadonlySet<string>
  /**
   * New tables of new schemas: stored with their own selection already (the schema hides
   * them), so the transaction leaves them alone.
   */
  settled: ReadonlySet<string>
}

/**
 * Stores the schemas and tables a save adds, with their columns, before its transaction and
 * hidden: a new schema or table is stored unselected, so no session, exposure or audit sees it,
 * and a hundred tables go in per short statement, so the embedded store (one session, where
 * a transaction holds every other request) answers between them. The transaction then only
 * selects what the save selects. `dropStaged` removes them again when the save fails.
 */
export async function stageNewTables(
  db: Db,
  ds: string,
  rows: SelectionRows,
  onProgress?: ProgressListener,
): Promise<Staged> {
  const stored = async (table: 'catalog_schemas' | 'catalog_tables') =>
    new Set(
      (
        await rowsOf<{ id: string }>(
          db.execute(sql`SELECT id FROM ${sql.identifier(table)} WHERE datasource_id = ${ds}`),
        )
      ).map((r) => r.id),
    )
  const storedSchemas = await stored('catalog_schemas')
  const storedTables = await stored('catalog_tables')
  const newSchemas = rows.schemas.filter((s) => !storedSchemas.has(s.id))
  const newTables = rows.tables.filter((t) => !storedTables.has(t.row.id))
  const staged = {
    schemas: new Set(newSchemas.map((s) => s.id)),
    tables: new Set<string>(),
    settled: new Set<string>(),
  }
  if (newSchemas.length > 0) {
    await db.execute(sql`INSERT INTO catalog_schemas (id, datasource_id, schema_name, is_selected)
      SELECT x.id, ${ds}::uuid, x.schema_name, false
      FROM json_to_recordset(${jsonRows(newSchemas)}) AS x(id uuid, schema_name text)
      ON CONFLICT DO NOTHING`)
  }
  let done = 0
  for (const slice of slicesOf(newTables, TABLES_PER_STAGE)) {
    const inserted = await rowsOf<{ id: string }>(
      db.execute(sql`WITH t AS (
          INSERT INTO catalog_tables (id, datasource_id, schema_id, table_name, table_type,
            is_selected, view_definition, view_reads, ancestors, primary_key)
          SELECT x.id, ${ds}::uuid, x.schema_id, x.table_name, x.table_type, x.is_selected,
            x.view_definition, x.view_reads, x.ancestors, x.primary_key
          FROM json_to_recordset(${jsonRows(
            slice.map((t) => ({
              ...t.row,
              // Hidden by its new schema, a table may carry its selection already; else not yet.
              is_selected: staged.schemas.has(t.row.schema_id) && t.row.is_selected,
            })),
          )}) AS x(id uuid, schema_id uuid, table_name text, table_type text,
            is_selected boolean, view_definition text, view_reads jsonb, ancestors jsonb,
            primary_key jsonb)
          ON CONFLICT DO NOTHING RETURNING id),
        c AS (
          INSERT INTO catalog_columns (id, table_id, column_name, ordinal_position, data_type,
            is_nullable, column_default, is_selected)
          SELECT x.id, x.table_id, x.column_name, x.ordinal_position, x.data_type,
            x.is_nullable, x.column_default, coalesce(x.is_selected, true)
          FROM (${columnRows(slice.flatMap((t) => t.columns ?? []))}) x
          WHERE x.table_id IN (SELECT id FROM t)
          ON CONFLICT DO NOTHING)
        SELECT id FROM t`),
    )
    const hiddenBySchema = new Set(
      slice.filter((t) => staged.schemas.has(t.row.schema_id)).map((t) => t.row.id),
    )
    for (const r of inserted) {
      staged.tables.add(r.id)
      if (hiddenBySchema.has(r.id)) staged.settled.add(r.id)
    }
    done += slice.length
    onProgress?.(done, rows.tables.length)
  }
  return staged
}

/** Removes what `stageNewTables` stored and no transaction selected since (a failed save). */
export async function dropStaged(db: Db, staged: Staged): Promise<void> {
  // A new schema still unselected takes its tables, all of them staged, with it.
  if (staged.schemas.size > 0) {
    await db.execute(
      sql`DELETE FROM catalog_schemas WHERE ${idIn(sql.raw('id'), [...staged.schemas])}
        AND NOT is_selected`,
    )
  }
  const hidden = [...staged.tables].filter((id) => !staged.settled.has(id))
  if (hidden.length > 0) {
    await db.execute(
      sql`DELETE FROM catalog_tables WHERE ${idIn(sql.raw('id'), hidden)} AND NOT is_selected`,
    )
  }
}

/** What `writeSelection` may skip and whom it tells its progress. */
export interface WriteOptions {
  /** Tables (ids) known to be stored exactly as the selection has them (`planSave`). */
  unchanged?: ReadonlySet<string>
  onProgress?: ProgressListener
}

/**
 * Writes a checked selection in a few statements per thousand tables: schemas, tables and
 * columns kept are upserted (rows that did not change are not written), the rest removed;
 * staged tables only get their selection, unchanged ones nothing. Returns how many rows were
 * inserted, updated or deleted.
 */
export async function writeSelection(
  m: Mutation,
  ds: string,
  rows: SelectionRows,
  staged: Staged,
  { unchanged = new Set(), onProgress }: WriteOptions = {},
): Promise<number> {
  const tx = m.tx
  const keepTables = rows.tables.map((t) => t.row.id)
  const doomed = (
    await tx
      .select({ id: catalogTables.id })
      .from(catalogTables)
      .where(and(eq(catalogTables.datasourceId, ds), not(idIn(catalogTables.id, keepTables))))
  ).map((t) => t.id)
  let changed = 0
  if (doomed.length > 0) {
    await dropDependents(m, doomed)
    changed += await count(tx.delete(catalogTables).where(idIn(catalogTables.id, doomed)))
  }
  changed += await count(
    tx.delete(catalogSchemas).where(
      and(
        eq(catalogSchemas.datasourceId, ds),
        not(
          idIn(
            catalogSchemas.id,
            rows.schemas.map((s) => s.id),
          ),
        ),
      ),
    ),
  )
  changed += await upsertSchemas(tx, ds, rows)
  // Staged tables were counted as they were stored: these slices count the others.
  let done = staged.tables.size + [...unchanged].filter((id) => !staged.tables.has(id)).length
  const open = rows.tables.filter((t) => !staged.settled.has(t.row.id) && !unchanged.has(t.row.id))
  for (const slice of slicesOf(open, TABLES_PER_STATEMENT)) {
    changed += await upsertTables(
      tx,
      ds,
      slice.map((t) => t.row),
    )
    // A staged table's columns are already as the save wants them.
    const replaced = slice.filter((t) => t.columns !== null && !staged.tables.has(t.row.id))
    changed += await replaceColumns(
      tx,
      replaced.map((t) => t.row.id),
      replaced.flatMap((t) => t.columns ?? []),
    )
    const counted = slice.filter((t) => !staged.tables.has(t.row.id)).length
    if (counted > 0) {
      done += counted
      onProgress?.(done, rows.tables.length)
    }
  }
  // Staged rows count as written (their schema or table was hidden until now).
  return changed + staged.tables.size + staged.schemas.size
}

/** The number a statement's `WITH … SELECT changed` answers. */
async function count(statement: Promise<unknown>): Promise<number> {
  const result = (await statement) as { rows?: { changed?: number }[]; rowCount?: number | null }
  const first = result.rows?.[0]
  if (first && typeof first.changed === 'number') return first.changed
  return Number(result.rowCount ?? (result as { affectedRows?: number }).affectedRows ?? 0)
}

async function upsertSchemas(tx: Db, ds: string, rows: SelectionRows): Promise<number> {
  if (rows.schemas.length === 0) return 0
  const [result] = await rowsOf<{ changed: number }>(
    tx.execute(sql`WITH x AS (
        SELECT * FROM json_to_recordset(${jsonRows(rows.schemas)})
          AS x(id uuid, schema_name text, schema_alias text, is_selected boolean)),
      ins AS (
        INSERT INTO catalog_schemas (id, datasource_id, schema_name, schema_alias, is_selected)
        SELECT x.id, ${ds}::uuid, x.schema_name, x.schema_alias, x.is_selected FROM x
        ON CONFLICT DO NOTHING RETURNING 1),
      upd AS (
        UPDATE catalog_schemas s SET schema_alias = x.schema_alias, is_selected = x.is_selected
        FROM x WHERE s.id = x.id
          AND (s.schema_alias, s.is_selected) IS DISTINCT FROM (x.schema_alias, x.is_selected)
        RETURNING 1)
      SELECT ((SELECT count(*) FROM ins) + (SELECT count(*) FROM upd))::int AS changed`),
  )
  return result?.changed ?? 0
}

/** Inserts new tables and updates changed ones; metadata a save did not read stays as stored. */
async function upsertTables(tx: Db, ds: string, tables: TableRow[]): Promise<number> {
  if (tables.length === 0) return 0
  const [result] = await rowsOf<{ changed: number }>(
    tx.execute(sql`WITH x AS (
        SELECT * FROM json_to_recordset(${jsonRows(tables)}) AS x(id uuid, schema_id uuid,
          table_name text, table_type text, is_selected boolean, set_definition boolean,
          view_definition text, view_reads jsonb, set_ancestors boolean, ancestors jsonb,
          set_key boolean, primary_key jsonb)),
      ins AS (
        INSERT INTO catalog_tables (id, datasource_id, schema_id, table_name, table_type,
          is_selected, view_definition, view_reads, ancestors, primary_key)
        SELECT x.id, ${ds}::uuid, x.schema_id, x.table_name, x.table_type, x.is_selected,
          x.view_definition, x.view_reads, x.ancestors, x.primary_key FROM x
        ON CONFLICT DO NOTHING RETURNING 1),
      y AS (
        SELECT t.id, x.table_type, x.is_selected,
          CASE WHEN x.set_definition THEN x.view_definition ELSE t.view_definition END AS view_definition,
          CASE WHEN x.set_definition THEN x.view_reads ELSE t.view_reads END AS view_reads,
          CASE WHEN x.set_ancestors THEN x.ancestors ELSE t.ancestors END AS ancestors,
          CASE WHEN x.set_key THEN x.primary_key ELSE t.primary_key END AS primary_key
        FROM x JOIN catalog_tables t ON t.id = x.id
        WHERE (t.table_type, t.is_selected, t.view_definition, t.view_reads, t.ancestors,
            t.primary_key) IS DISTINCT FROM (x.table_type, x.is_selected,
            CASE WHEN x.set_definition THEN x.view_definition ELSE t.view_definition END,
            CASE WHEN x.set_definition THEN x.view_reads ELSE t.view_reads END,
            CASE WHEN x.set_ancestors THEN x.ancestors ELSE t.ancestors END,
            CASE WHEN x.set_key THEN x.primary_key ELSE t.primary_key END)),
      upd AS (
        UPDATE catalog_tables t SET table_type = y.table_type, is_selected = y.is_selected,
          view_definition = y.view_definition, view_reads = y.view_reads,
          ancestors = y.ancestors, primary_key = y.primary_key
        FROM y WHERE t.id = y.id RETURNING 1)
      SELECT ((SELECT count(*) FROM ins) + (SELECT count(*) FROM upd))::int AS changed`),
  )
  return result?.changed ?? 0
}

/**
 * Makes the stored columns of `tableIds` exactly `columns`: inserts new ones, updates changed
 * ones (a null `is_selected` keeps the stored choice) and deletes the others.
 */
export async function replaceColumns(
  tx: Db,
  tableIds: string[],
  columns: ColumnRow[],
): Promise<number> {
  if (tableIds.length === 0) return 0
  const [result] = await rowsOf<{ changed: number }>(
    tx.execute(sql`WITH x AS (${columnRows(columns)}),
      del AS (
        DELETE FROM catalog_columns c WHERE ${idIn(sql.raw('c.table_id'), tableIds)}
          AND NOT EXISTS (SELECT 1 FROM x WHERE x.id = c.id) RETURNING 1),
      ${columnUpserts}
      SELECT ((SELECT count(*) FROM del) + (SELECT count(*) FROM ins)
        + (SELECT count(*) FROM upd))::int AS changed`),
  )
  return result?.changed ?? 0
}

/** Inserts new columns and updates changed ones; other columns stay as stored. */
export async function upsertColumns(tx: Db, columns: ColumnRow[]): Promise<number> {
  if (columns.length === 0) return 0
  const [result] = await rowsOf<{ changed: number }>(
    tx.execute(sql`WITH x AS (${columnRows(columns)}),
      ${columnUpserts}
      SELECT ((SELECT count(*) FROM ins) + (SELECT count(*) FROM upd))::int AS changed`),
  )
  return result?.changed ?? 0
}

function columnRows(columns: ColumnRow[]) {
  return sql`SELECT * FROM json_to_recordset(${jsonRows(columns)}) AS x(id uuid, table_id uuid,
    column_name text, ordinal_position integer, data_type text, is_nullable boolean,
    column_default text, is_selected boolean)`
}

const columnUpserts = sql`ins AS (
    INSERT INTO catalog_columns (id, table_id, column_name, ordinal_position, data_type,
      is_nullable, column_default, is_selected)
    SELECT x.id, x.table_id, x.column_name, x.ordinal_position, x.data_type, x.is_nullable,
      x.column_default, coalesce(x.is_selected, true) FROM x
    ON CONFLICT DO NOTHING RETURNING 1),
  upd AS (
    UPDATE catalog_columns c SET ordinal_position = x.ordinal_position, data_type = x.data_type,
      is_nullable = x.is_nullable, column_default = x.column_default,
      is_selected = coalesce(x.is_selected, c.is_selected)
    FROM x WHERE c.id = x.id
      AND (c.ordinal_position, c.data_type, c.is_nullable, c.column_default, c.is_selected)
        IS DISTINCT FROM (x.ordinal_position, x.data_type, x.is_nullable, x.column_default,
          coalesce(x.is_selected, c.is_selected))
    RETURNING 1)`

/** Relationships and anchors on removed tables are deleted with `reason: catalog_saved`. */
async function dropDependents(m: Mutation, tableIds: string[]): Promise<void> {
  const rels = await m.tx
    .select()
    .from(tableRelationships)
    .where(
      or(
        idIn(tableRelationships.childTableId, tableIds),
        idIn(tableRelationships.parentTableId, tableIds),
      ),
    )
  const relIds = rels.map((r) => r.id)
  const anchors = await m.tx
    .select()
    .from(columnAnchors)
    .where(
      relIds.length
        ? or(
            idIn(columnAnchors.childTableId, tableIds),
            inArray(columnAnchors.relationshipId, relIds),
          )
        : idIn(columnAnchors.childTableId, tableIds),
    )
  for (const a of anchors) {
    m.audit('column_anchor', a.id, 'delete', {
      before: await anchorSnapshot(m.tx, a),
      reason: 'catalog_saved',
    })
  }
  if (anchors.length)
    await m.tx.delete(columnAnchors).where(
      inArray(
        columnAnchors.id,
        anchors.map((a) => a.id),
      ),
    )
  for (const r of rels) {
    m.audit('table_relationship', r.id, 'delete', {
      before: await relationshipSnapshot(m.tx, r),
      reason: 'catalog_saved',
    })
  }
  if (rels.length)
    await m.tx.delete(tableRelationships).where(inArray(tableRelationships.id, relIds))
}
