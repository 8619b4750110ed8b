import type { Catalog } from '@palisade/core'
import { eq, inArray } from 'drizzle-orm'
import * as v from 'valibot'
import { requireDatasource } from '../datasources/datasources-service.js'
import type { StoreContext } from '../kernel/context.js'
import { ValidationError } from '../kernel/errors.js'
import { boundedString, parseBody } from '../kernel/validation.js'
import { catalogColumns, catalogTables, datasources } from '../tables.js'
import { catalogChanges, definitionsOf } from './catalog-changes.js'
import {
  type CatalogSyncReport,
  planCatalogSync,
  type UpstreamCatalogSnapshot,
} from './catalog-sync.js'
import { dropColumnTags } from './catalog-tags.js'
import { bumpCatalogVersion } from './catalog-version.js'
import {
  type CatalogView,
  catalogIds,
  exposedOf,
  readCatalog,
  readExposedCatalog,
  type SaveSchemaInput,
} from './catalog-view.js'
import { writeSelection } from './catalog-write.js'

const name = boundedString(1, 63)
const saveSchema = v.array(
  v.object({
    schema_name: name,
    schema_alias: v.nullish(
      v.union([
        v.literal(''),
        v.pipe(boundedString(1, 63), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid alias')),
      ]),
    ),
    is_selected: v.boolean('expected a boolean'),
    tables: v.array(
      v.object({
        table_name: name,
        table_type: v.nullish(
          v.picklist(['TABLE', 'VIEW', 'MATERIALIZED VIEW', 'FOREIGN TABLE'], 'unknown table_type'),
        ),
        is_selected: v.boolean('expected a boolean'),
        view_definition: v.nullish(v.string('expected a string')),
        view_reads: v.nullish(
          v.array(v.object({ schema: name, table: name }), 'expected an array'),
        ),
        ancestors: v.nullish(v.array(v.object({ schema: name, table: name }), 'expected an array')),
        primary_key: v.nullish(v.array(name, 'expected an array')),
        columns: v.nullish(
          v.array(
            v.object({
              column_name: name,
              ordinal_position: v.pipe(
                v.number('expected an integer'),
                v.integer('expected an integer'),
              ),
              data_type: boundedString(1, 256),
              is_nullable: v.boolean('expected a boolean'),
              column_default: v.nullish(v.string('expected a string')),
              is_selected: v.nullish(v.boolean('expected a boolean')),
            }),
          ),
        ),
      }),
    ),
  }),
)

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

  /** The exposed part, as sessions see it before per-user policies. */
  async exposed(datasourceId: string): Promise<Catalog> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return readExposedCatalog(this.#ctx.db, datasourceId)
  }

  /**
   * Replaces the stored selection (docs/admin-api.md#catalog-discovery `save_catalog`) from column metadata the caller
   * read upstream. One datasource/update `catalog` entry; dependent relationships and anchors of
   * removed tables are deleted with their own entries.
   */
  async saveCatalog(
    datasourceId: string,
    schemas: SaveSchemaInput[],
    actorId: string,
  ): Promise<{ exposed_tables: number; exposed_columns: number }> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const input = parseBody(saveSchema, schemas)
      const visible = new Map<string, number>()
      const details = []
      for (const [i, s] of input.entries()) {
        const label = s.schema_alias || s.schema_name
        if (visible.has(label)) {
          details.push({
            field: `schemas[${i}].schema_alias`,
            code: 'duplicate',
            message: `visible name ${label} is used twice`,
          })
        }
        visible.set(label, i)
      }
      if (details.length > 0) throw new ValidationError(details)
      const before = await readExposedCatalog(m.tx, datasourceId)
      await writeSelection(m, datasourceId, input as SaveSchemaInput[])
      await bumpCatalogVersion(m.tx, datasourceId)
      const exposed = await readExposedCatalog(m.tx, datasourceId)
      const changes = catalogChanges(before, exposed, 'save_catalog')
      m.audit('datasource', datasourceId, 'update', changes)
      if (Object.keys(changes.after).length > 0 || definitionsOf(before) !== definitionsOf(exposed))
        m.invalidate({ type: 'ds', datasourceId })
      const tables = exposed.schemas.flatMap((s) => s.tables)
      return {
        exposed_tables: tables.length,
        exposed_columns: tables.reduce((n, t) => n + t.columns.length, 0),
      }
    })
  }

  /**
   * Applies a live upstream read to the stored selection (docs/admin-api.md#catalog-discovery `sync_catalog`):
   * updates column metadata, adds new columns of exposed tables as selected, removes vanished
   * columns, and stores the drift report in `last_sync_at`/`last_sync_result`. New schemas and
   * tables are only reported. One datasource/update `catalog` entry.
   */
  async syncCatalog(
    datasourceId: string,
    upstream: UpstreamCatalogSnapshot,
    actorId: string,
  ): Promise<CatalogSyncReport> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const view = await readCatalog(m.tx, datasourceId)
      const before = exposedOf(view)
      const { report, upserts, deletes, deletedColumns, relationUpdates } = planCatalogSync(
        view,
        upstream,
      )
      for (const { tableId, ...set } of relationUpdates) {
        await m.tx.update(catalogTables).set(set).where(eq(catalogTables.id, tableId))
      }
      if (deletes.length > 0) {
        await m.tx.delete(catalogColumns).where(inArray(catalogColumns.id, deletes))
      }
      // A column dropped upstream loses its tags; the drift report lists them.
      const removedTags = await dropColumnTags(m.tx, datasourceId, deletedColumns)
      // Only when there are some, so a report without tag loss keeps the documented shape.
      if (removedTags.length > 0) report.removed_tags = removedTags
      for (const { tableId, schema, table, column } of upserts) {
        const values = {
          ordinalPosition: column.ordinal_position,
          dataType: column.data_type,
          isNullable: column.is_nullable,
          columnDefault: column.column_default ?? null,
        }
        await m.tx
          .insert(catalogColumns)
          .values({
            id: catalogIds.column(datasourceId, schema, table, column.column_name),
            tableId,
            columnName: column.column_name,
            isSelected: true,
            ...values,
          })
          .onConflictDoUpdate({ target: catalogColumns.id, set: values })
      }
      await m.tx
        .update(datasources)
        .set({ lastSyncAt: m.now, lastSyncResult: report })
        .where(eq(datasources.id, datasourceId))
      const after = await readExposedCatalog(m.tx, datasourceId)
      m.audit('datasource', datasourceId, 'update', catalogChanges(before, after, 'sync_catalog'))
      if (deletes.length > 0 || upserts.length > 0 || relationUpdates.length > 0) {
        await bumpCatalogVersion(m.tx, datasourceId)
        m.invalidate({ type: 'ds', datasourceId })
      }
      return report
    })
  }
}
