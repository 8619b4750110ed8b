import type { RelationName, TableKind } from '@palisade/core'
import { turnTaker } from '../kernel/slices.js'
import type { CatalogView } from './catalog-view.js'

/** One live upstream column, as discovery reads it. */
export interface UpstreamColumn {
  schema_name: string
  table_name: string
  column_name: string
  ordinal_position: number
  data_type: string
  is_nullable: boolean
  column_default: string | null
}

/** What `sync_catalog` read upstream for the stored selection (docs/admin-api.md#catalog-discovery). */
export interface UpstreamCatalogSnapshot {
  /** Every upstream schema, system schemas excluded. */
  schemas: string[]
  /** The upstream tables of the stored schemas, with view definitions when read. */
  tables: {
    schema_name: string
    table_name: string
    table_type: TableKind
    view_definition?: string | null
    view_reads?: RelationName[] | null
    /** Tables it inherits from or is a partition of, nearest first. */
    ancestors?: RelationName[] | null
    /** Tables: the primary key's columns in key order. */
    primary_key?: string[] | null
  }[]
  /**
   * The tables whose columns were read: only these are synced, so a table exposed after the
   * read is left alone rather than emptied.
   */
  column_tables: { schema_name: string; table_name: string }[]
  /** The live columns of `column_tables`. */
  columns: UpstreamColumn[]
}

/** The drift report of `sync_catalog`, stored as `last_sync_result` (docs/admin-api.md#catalog-discovery). */
export interface CatalogSyncReport {
  added_schemas: string[]
  removed_schemas: string[]
  added_tables: string[]
  removed_tables: string[]
  added_columns: string[]
  removed_columns: string[]
  changed_columns: string[]
  /** Tags of removed columns, as `schema.table.column: tag` (they are dropped with the column). */
  removed_tags?: string[]
  has_breaking_changes: boolean
}

/** The column writes of one sync, keyed by stored table id. */
export interface CatalogSyncPlan {
  report: CatalogSyncReport
  /** Columns to insert (selected) or update, with their table's stored id and names. */
  upserts: { tableId: string; schema: string; table: string; column: UpstreamColumn }[]
  /** Stored column ids that vanished upstream. */
  deletes: string[]
  /** The same columns by name (their tags go with them). */
  deletedColumns: { schema: string; table: string; column: string }[]
  /** Stored relations whose kind or view definition changed upstream. */
  relationUpdates: {
    tableId: string
    schema: string
    table: string
    tableType: TableKind
    viewDefinition: string | null
    viewReads: RelationName[] | null
    ancestors: RelationName[] | null
    primaryKey: string[] | null
  }[]
}

const dotted = (...parts: string[]) => parts.join('.')

/**
 * Compares the stored catalog with the live upstream: new schemas and tables are only
 * reported; columns of exposed tables are added (selected), updated or removed. A removed
 * schema, table or exposed column is a breaking change.
 */
export function planCatalogSync(
  view: CatalogView,
  upstream: UpstreamCatalogSnapshot,
): CatalogSyncPlan {
  const steps = planSteps(view, upstream)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/** `planCatalogSync` with a turn for other work every few milliseconds. */
export async function planCatalogSyncInTurns(
  view: CatalogView,
  upstream: UpstreamCatalogSnapshot,
): Promise<CatalogSyncPlan> {
  const steps = planSteps(view, upstream)
  const turn = turnTaker()
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
    await turn()
  }
}

/** Work items (tables or columns) between two pauses of `planSteps`, where a turn may be taken. */
const STEP = 250

/** The comparison, pausing (yielding) every STEP items so a caller can give other work a turn. */
function* planSteps(
  view: CatalogView,
  upstream: UpstreamCatalogSnapshot,
): Generator<void, CatalogSyncPlan> {
  let work = 0
  const liveSchemas = new Set(upstream.schemas)
  const storedSchemas = new Set(view.schemas.map((s) => s.schema_name))
  const liveTables = new Set(upstream.tables.map((t) => dotted(t.schema_name, t.table_name)))
  const read = new Set(upstream.column_tables.map((t) => dotted(t.schema_name, t.table_name)))
  const report: CatalogSyncReport = {
    added_schemas: [...liveSchemas].filter((s) => !storedSchemas.has(s)),
    removed_schemas: [...storedSchemas].filter((s) => !liveSchemas.has(s)),
    added_tables: [],
    removed_tables: [],
    added_columns: [],
    removed_columns: [],
    changed_columns: [],
    has_breaking_changes: false,
  }
  const plan: CatalogSyncPlan = {
    report,
    upserts: [],
    deletes: [],
    deletedColumns: [],
    relationUpdates: [],
  }
  const liveByName = new Map(upstream.tables.map((t) => [dotted(t.schema_name, t.table_name), t]))
  const liveBySchema = new Map<string, typeof upstream.tables>()
  for (const t of upstream.tables) {
    const list = liveBySchema.get(t.schema_name)
    if (list) list.push(t)
    else liveBySchema.set(t.schema_name, [t])
  }
  // Grouped once: looking a table's columns up in the whole list made a large sync quadratic.
  const liveColumns = new Map<string, UpstreamColumn[]>()
  for (const c of upstream.columns) {
    const key = dotted(c.schema_name, c.table_name)
    const list = liveColumns.get(key)
    if (list) list.push(c)
    else liveColumns.set(key, [c])
    if (++work % STEP === 0) yield
  }
  let removedExposed = false
  for (const schema of view.schemas) {
    if (!liveSchemas.has(schema.schema_name)) continue
    const stored = new Set(schema.tables.map((t) => t.table_name))
    for (const t of liveBySchema.get(schema.schema_name) ?? []) {
      if (!stored.has(t.table_name)) {
        report.added_tables.push(dotted(t.schema_name, t.table_name))
      }
    }
    for (const table of schema.tables) {
      work += 1 + table.columns.length
      if (work >= STEP) {
        work = 0
        yield
      }
      const name = dotted(schema.schema_name, table.table_name)
      if (!liveTables.has(name)) {
        report.removed_tables.push(name)
        continue
      }
      const relation = liveByName.get(name)
      if (relation && relation.view_definition !== undefined) {
        const update = {
          tableId: table.id,
          schema: schema.schema_name,
          table: table.table_name,
          tableType: relation.table_type,
          viewDefinition: relation.view_definition ?? null,
          viewReads: relation.view_reads ?? null,
          ancestors: relation.ancestors ?? null,
          primaryKey: relation.primary_key ?? null,
        }
        if (
          table.table_type !== update.tableType ||
          (table.view_definition ?? null) !== update.viewDefinition ||
          JSON.stringify(table.view_reads ?? null) !== JSON.stringify(update.viewReads) ||
          JSON.stringify(table.ancestors ?? null) !== JSON.stringify(update.ancestors) ||
          JSON.stringify(table.primary_key ?? null) !== JSON.stringify(update.primaryKey)
        ) {
          plan.relationUpdates.push(update)
        }
      }
      if (!schema.is_selected || !table.is_selected || !read.has(name)) continue
      const live = liveColumns.get(name) ?? []
      const liveNames = new Set(live.map((c) => c.column_name))
      for (const c of table.columns) {
        if (liveNames.has(c.column_name)) continue
        report.removed_columns.push(dotted(name, c.column_name))
        plan.deletes.push(c.id)
        plan.deletedColumns.push({
          schema: schema.schema_name,
          table: table.table_name,
          column: c.column_name,
        })
        if (c.is_selected) removedExposed = true
      }
      const byName = new Map(table.columns.map((c) => [c.column_name, c]))
      for (const column of live) {
        const before = byName.get(column.column_name)
        const key = dotted(name, column.column_name)
        if (!before) report.added_columns.push(key)
        else if (
          before.data_type !== column.data_type ||
          before.is_nullable !== column.is_nullable ||
          (before.column_default ?? null) !== (column.column_default ?? null) ||
          before.ordinal_position !== column.ordinal_position
        ) {
          report.changed_columns.push(key)
        } else continue
        plan.upserts.push({
          tableId: table.id,
          schema: schema.schema_name,
          table: table.table_name,
          column,
        })
      }
    }
  }
  for (const list of Object.values(report)) if (Array.isArray(list)) list.sort()
  report.has_breaking_changes =
    report.removed_schemas.length > 0 || report.removed_tables.length > 0 || removedExposed
  return plan
}
