import type { Catalog } from '@palisade/core'
import { eq, sql } from 'drizzle-orm'
import { requireDatasource } from '../datasources/datasources-service.js'
import type { StoreContext } from '../kernel/context.js'
import type { Db } from '../kernel/db.js'
import type { Page, PageInput } from '../kernel/pagination.js'
import { datasources } from '../tables.js'
import { catalogChanges, definitionsChanged } from './catalog-changes.js'
import { type Exposure, exposureOfSelection, readExposure } from './catalog-exposure.js'
import { idIn } from './catalog-json.js'
import { type CatalogPageFilter, readCatalogPage } from './catalog-page.js'
import { type PlannedSave, planSave } from './catalog-save-plan.js'
import { checkSelection, type SelectionRows, selectionRows } from './catalog-selection.js'
import {
  type CatalogSyncPlan,
  type CatalogSyncReport,
  planCatalogSyncInTurns,
  type UpstreamCatalogSnapshot,
} from './catalog-sync.js'
import { dropColumnTags } from './catalog-tags.js'
import { bumpCatalogVersion } from './catalog-version.js'
import {
  type CatalogView,
  catalogIds,
  readCatalog,
  readExposedCatalog,
  readOutline,
  type SaveSchemaInput,
} from './catalog-view.js'
import {
  dropStaged,
  type ProgressListener,
  type Staged,
  stageNewTables,
  upsertColumns,
  writeSelection,
} from './catalog-write.js'

/** What a long catalog job may hear while it runs. */
export interface CatalogJobOptions {
  /** Tables written (save) or compared (sync) so far, of all. */
  onProgress?: ProgressListener
}

/** A sync worked out against one catalog version. */
interface PlannedSync {
  version: number
  plan: CatalogSyncPlan
}

/** The stored catalog selection per datasource (docs/admin-api.md#catalog-discovery). */
export class CatalogService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** The unfiltered stored catalog; 404 when the datasource is unknown. */
  async get(datasourceId: string): Promise<CatalogView> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return readCatalog(this.#ctx.db, datasourceId)
  }

  /**
   * One page of the unfiltered stored catalog (docs/admin-api.md#catalog-discovery): tables in
   * schema and name order, under their schemas; a schema without tables counts as one entry.
   */
  async page(
    datasourceId: string,
    input: PageInput & CatalogPageFilter = {},
  ): Promise<CatalogView & Omit<Page<unknown>, 'data'>> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return readCatalogPage(this.#ctx.db, datasourceId, input)
  }

  /** Schemas and tables of the stored catalog, without columns. */
  async outline(datasourceId: string): Promise<CatalogView> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return readOutline(this.#ctx.db, datasourceId)
  }

  /** The exposed part, as sessions see it before per-user policies. */
  async exposed(datasourceId: string): Promise<Catalog> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return readExposedCatalog(this.#ctx.db, datasourceId)
  }

  /**
   * Replaces the stored selection (docs/admin-api.md#catalog-discovery `save_catalog`) from column metadata the caller
   * read upstream. One datasource/update `catalog` entry; dependent relationships and anchors of
   * removed tables are deleted with their own entries. The rows are built, new tables stored
   * hidden (`stageNewTables`) and the rest compared with the stored catalog (`planSave`) before
   * the transaction; the transaction writes only what differs, in bulk. Only a save that changed
   * rows moves the catalog version.
   */
  async saveCatalog(
    datasourceId: string,
    schemas: SaveSchemaInput[],
    actorId: string,
    options: CatalogJobOptions = {},
  ): Promise<{ exposed_tables: number; exposed_columns: number }> {
    const first = await requireDatasource(this.#ctx.db, datasourceId)
    const rows = await selectionRows(datasourceId, await checkSelection(schemas))
    const staged = await stageNewTables(this.#ctx.db, datasourceId, rows, options.onProgress)
    try {
      const planned = await planSave(this.#ctx.db, datasourceId, first.catalogVersion, rows, staged)
      return await this.#writeSaved(datasourceId, rows, staged, planned, actorId, options)
    } catch (error) {
      await dropStaged(this.#ctx.db, staged).catch(() => {})
      throw error
    }
  }

  async #writeSaved(
    datasourceId: string,
    rows: SelectionRows,
    staged: Staged,
    planned: PlannedSave,
    actorId: string,
    options: CatalogJobOptions,
  ): Promise<{ exposed_tables: number; exposed_columns: number }> {
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireDatasource(m.tx, datasourceId, true)
      // The plan holds while no catalog change committed since it was read.
      const current = row.catalogVersion === planned.version
      const before = current ? planned.before : await readExposure(m.tx, datasourceId)
      const unchanged = current ? planned.unchanged : new Set<string>()
      const changed = await writeSelection(m, datasourceId, rows, staged, {
        unchanged,
        onProgress: options.onProgress,
      })
      const after = changed > 0 ? await exposureAfterSave(m.tx, datasourceId, rows) : before
      if (changed > 0) await bumpCatalogVersion(m.tx, datasourceId)
      const changes = catalogChanges(before, after, 'save_catalog')
      m.audit('datasource', datasourceId, 'update', changes)
      if (Object.keys(changes.after).length > 0 || definitionsChanged(before, after))
        m.invalidate({ type: 'ds', datasourceId })
      let columns = 0
      for (const list of after.tables.values()) columns += list.length
      return { exposed_tables: after.tables.size, exposed_columns: columns }
    })
  }

  /**
   * Applies a live upstream read to the stored selection (docs/admin-api.md#catalog-discovery `sync_catalog`):
   * updates column metadata, adds new columns of exposed tables as selected, removes vanished
   * columns, and stores the drift report in `last_sync_at`/`last_sync_result`. New schemas and
   * tables are only reported. One datasource/update `catalog` entry.
   *
   * The comparison runs before the transaction, against the catalog version read first; the
   * transaction only redoes it when that version moved meanwhile. A sync that changed nothing
   * writes no catalog row, keeps the version and invalidates no session.
   */
  async syncCatalog(
    datasourceId: string,
    upstream: UpstreamCatalogSnapshot,
    actorId: string,
    options: CatalogJobOptions = {},
  ): Promise<CatalogSyncReport> {
    const first = await requireDatasource(this.#ctx.db, datasourceId)
    let planned = await planSync(
      this.#ctx.db,
      datasourceId,
      first.catalogVersion,
      upstream,
      options,
    )
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireDatasource(m.tx, datasourceId, true)
      if (row.catalogVersion !== planned.version) {
        planned = await planSync(m.tx, datasourceId, row.catalogVersion, upstream, {})
      }
      const { report, upserts, deletes, deletedColumns, relationUpdates } = planned.plan
      const touched = [
        ...new Set([
          ...upserts.map((u) => u.tableId),
          ...deletedColumns.map((c) => catalogIds.table(datasourceId, c.schema, c.table)),
          ...relationUpdates.map((u) => u.tableId),
        ]),
      ]
      const before: Exposure =
        touched.length > 0
          ? await readExposure(m.tx, datasourceId, touched)
          : { aliases: new Map(), tables: new Map(), definitions: new Map() }
      await applyRelationUpdates(m.tx, relationUpdates)
      if (deletes.length > 0) {
        await m.tx.execute(sql`DELETE FROM catalog_columns WHERE ${idIn(sql.raw('id'), deletes)}`)
      }
      // A column dropped upstream loses its tags; the drift report lists them.
      const removedTags = await dropColumnTags(m.tx, datasourceId, deletedColumns)
      // Only when there are some, so a report without tag loss keeps the documented shape.
      if (removedTags.length > 0) report.removed_tags = removedTags
      await upsertColumns(
        m.tx,
        upserts.map(({ tableId, schema, table, column }) => ({
          id: catalogIds.column(datasourceId, schema, table, column.column_name),
          table_id: tableId,
          column_name: column.column_name,
          ordinal_position: column.ordinal_position,
          data_type: column.data_type,
          is_nullable: column.is_nullable,
          column_default: column.column_default ?? null,
          // New columns are exposed; a changed one keeps its selection.
          is_selected: null,
        })),
      )
      await m.tx
        .update(datasources)
        .set({ lastSyncAt: m.now, lastSyncResult: report })
        .where(eq(datasources.id, datasourceId))
      const after = touched.length > 0 ? await readExposure(m.tx, datasourceId, touched) : before
      m.audit('datasource', datasourceId, 'update', catalogChanges(before, after, 'sync_catalog'))
      if (touched.length > 0) {
        const version = await bumpCatalogVersion(m.tx, datasourceId)
        const relations = [...upserts, ...deletedColumns, ...relationUpdates].map((r) => ({
          schema: r.schema,
          table: r.table,
        }))
        // Sessions of this process patch these tables into the catalog they keep.
        m.invalidate({ type: 'ds', datasourceId, catalogEdit: { version, relations } })
      }
      return report
    })
  }
}

/** What a save exposes: from its rows, and read back only where it kept stored metadata. */
async function exposureAfterSave(tx: Db, datasourceId: string, rows: SelectionRows) {
  const { exposure, unread } = exposureOfSelection(rows)
  if (unread.length > 0) {
    const read = await readExposure(tx, datasourceId, unread)
    for (const [key, columns] of read.tables) exposure.tables.set(key, columns)
    for (const [key, value] of read.definitions) exposure.definitions.set(key, value)
  }
  return exposure
}

/** Compares the stored catalog (read a slice of tables at a time) with the upstream read. */
async function planSync(
  db: Db,
  datasourceId: string,
  version: number,
  upstream: UpstreamCatalogSnapshot,
  options: CatalogJobOptions,
): Promise<PlannedSync> {
  const view = await readCatalog(db, datasourceId, options.onProgress)
  return { version, plan: await planCatalogSyncInTurns(view, upstream) }
}

/** Stores relations whose kind or definitions changed upstream, in one statement. */
async function applyRelationUpdates(
  tx: Db,
  updates: CatalogSyncPlan['relationUpdates'],
): Promise<void> {
  if (updates.length === 0) return
  const rows = updates.map((u) => ({
    id: u.tableId,
    table_type: u.tableType,
    view_definition: u.viewDefinition,
    view_reads: u.viewReads,
    ancestors: u.ancestors,
    primary_key: u.primaryKey,
  }))
  await tx.execute(sql`UPDATE catalog_tables t SET table_type = x.table_type,
      view_definition = x.view_definition, view_reads = x.view_reads, ancestors = x.ancestors,
      primary_key = x.primary_key
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(id uuid, table_type text,
      view_definition text, view_reads jsonb, ancestors jsonb, primary_key jsonb)
    WHERE t.id = x.id`)
}
