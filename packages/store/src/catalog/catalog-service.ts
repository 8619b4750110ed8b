import type { Catalog, CatalogSchema, RelationName, TableKind } from '@palisade/core'
import { asc, eq, inArray, or } from 'drizzle-orm'
import * as v from 'valibot'
import { requireDatasource } from '../datasources/datasources-service.js'
import { type StoreContext, sortedUnique } from '../kernel/context.js'
import type { Db } from '../kernel/db.js'
import { ValidationError } from '../kernel/errors.js'
import { uuidv5 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { boundedString, parseBody } from '../kernel/validation.js'
import {
  catalogColumns,
  catalogSchemas,
  catalogTables,
  columnAnchors,
  datasources,
  tableRelationships,
} from '../schema/index.js'
import {
  type CatalogSyncReport,
  planCatalogSync,
  type UpstreamCatalogSnapshot,
} from './catalog-sync.js'
import { dropColumnTags, withTags } from './catalog-tags.js'
import { bumpCatalogVersion } from './catalog-version.js'
import { anchorSnapshot, relationshipSnapshot } from './relationships-service.js'

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

/** Deterministic catalog ids (docs/resources.md#values): UUIDv5 in the datasource id's namespace. */
export const catalogIds = {
  schema: (ds: string, s: string) => uuidv5(ds, JSON.stringify(['schema', s])),
  table: (ds: string, s: string, t: string) => uuidv5(ds, JSON.stringify(['table', s, t])),
  column: (ds: string, s: string, t: string, c: string) =>
    uuidv5(ds, JSON.stringify(['column', s, t, c])),
}

/** Reads the stored catalog, all objects, sorted (docs/admin-api.md#catalog-discovery). */
async function readCatalog(db: Db, datasourceId: string): Promise<CatalogView> {
  const schemas = await db
    .select()
    .from(catalogSchemas)
    .where(eq(catalogSchemas.datasourceId, datasourceId))
    .orderBy(asc(catalogSchemas.schemaName))
  const tables = await db
    .select()
    .from(catalogTables)
    .where(eq(catalogTables.datasourceId, datasourceId))
    .orderBy(asc(catalogTables.tableName))
  const columns = tables.length
    ? await db
        .select()
        .from(catalogColumns)
        .where(
          inArray(
            catalogColumns.tableId,
            tables.map((t) => t.id),
          ),
        )
        .orderBy(asc(catalogColumns.ordinalPosition))
    : []
  return {
    datasource_id: datasourceId,
    schemas: schemas.map((s) => ({
      id: s.id,
      schema_name: s.schemaName,
      schema_alias: s.schemaAlias,
      is_selected: s.isSelected,
      tables: tables
        .filter((t) => t.schemaId === s.id)
        .map((t) => ({
          id: t.id,
          table_name: t.tableName,
          table_type: t.tableType,
          is_selected: t.isSelected,
          view_definition: t.viewDefinition,
          view_reads: t.viewReads,
          ancestors: t.ancestors,
          primary_key: t.primaryKey,
          columns: columns
            .filter((c) => c.tableId === t.id)
            .map((c) => ({
              id: c.id,
              column_name: c.columnName,
              ordinal_position: c.ordinalPosition,
              data_type: c.dataType,
              is_nullable: c.isNullable,
              column_default: c.columnDefault,
              is_selected: c.isSelected,
            })),
        })),
    })),
  }
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
  return { schemas }
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

/** The exposed relations' kinds and definitions, as one comparable string. */
function definitionsOf(catalog: Catalog): string {
  return JSON.stringify(
    catalog.schemas.flatMap((s) =>
      s.tables.map((t) => [
        s.name,
        t.name,
        t.kind,
        t.definition ?? null,
        t.reads ?? null,
        t.ancestors ?? null,
        t.primaryKey ?? null,
      ]),
    ),
  )
}

function exposureMap(catalog: Catalog): {
  tables: Map<string, string[]>
  aliases: Map<string, string | null>
} {
  const tables = new Map<string, string[]>()
  const aliases = new Map<string, string | null>()
  for (const s of catalog.schemas) {
    aliases.set(s.name, s.alias ?? null)
    for (const t of s.tables)
      tables.set(
        `${s.name}.${t.name}`,
        t.columns.map((c) => c.name),
      )
  }
  return { tables, aliases }
}

/**
 * The `changes` of a catalog audit entry (docs/admin-api.md#catalog-discovery): each `schema.table` whose exposure
 * changed maps to its exposed columns, or null; alias changes go under `schema_aliases`.
 */
function catalogChanges(
  beforeCatalog: Catalog,
  afterCatalog: Catalog,
  source: 'save_catalog' | 'sync_catalog',
): {
  field: 'catalog'
  source: string
  before: Record<string, unknown>
  after: Record<string, unknown>
} {
  const before = exposureMap(beforeCatalog)
  const after = exposureMap(afterCatalog)
  const b: Record<string, unknown> = {}
  const a: Record<string, unknown> = {}
  for (const key of sortedUnique([...before.tables.keys(), ...after.tables.keys()])) {
    const x = before.tables.get(key) ?? null
    const y = after.tables.get(key) ?? null
    if (JSON.stringify(x) !== JSON.stringify(y)) {
      b[key] = x
      a[key] = y
    }
  }
  const aliasAfter: Record<string, unknown> = {}
  const aliasBefore: Record<string, unknown> = {}
  for (const key of sortedUnique([...before.aliases.keys(), ...after.aliases.keys()])) {
    const x = before.aliases.get(key) ?? null
    const y = after.aliases.get(key) ?? null
    if (x !== y) {
      aliasBefore[key] = x
      aliasAfter[key] = y
    }
  }
  if (Object.keys(aliasAfter).length > 0) {
    b['schema_aliases'] = aliasBefore
    a['schema_aliases'] = aliasAfter
  }
  return { field: 'catalog', source, before: b, after: a }
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
      await this.#write(m, datasourceId, input as SaveSchemaInput[])
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

  async #write(m: Mutation, ds: string, input: SaveSchemaInput[]): Promise<void> {
    const tx = m.tx
    const keepSchemas = new Set(input.map((s) => catalogIds.schema(ds, s.schema_name)))
    const keepTables = new Set(
      input.flatMap((s) => s.tables.map((t) => catalogIds.table(ds, s.schema_name, t.table_name))),
    )
    const storedTables = await tx
      .select({ id: catalogTables.id })
      .from(catalogTables)
      .where(eq(catalogTables.datasourceId, ds))
    const doomed = storedTables.map((t) => t.id).filter((id) => !keepTables.has(id))
    if (doomed.length > 0) await this.#dropDependents(m, doomed)
    const storedSchemas = await tx
      .select({ id: catalogSchemas.id })
      .from(catalogSchemas)
      .where(eq(catalogSchemas.datasourceId, ds))
    const dropSchemas = storedSchemas.map((s) => s.id).filter((id) => !keepSchemas.has(id))
    if (dropSchemas.length > 0)
      await tx.delete(catalogSchemas).where(inArray(catalogSchemas.id, dropSchemas))
    if (doomed.length > 0) await tx.delete(catalogTables).where(inArray(catalogTables.id, doomed))
    for (const s of input) {
      const schemaId = catalogIds.schema(ds, s.schema_name)
      const alias = s.schema_alias ? s.schema_alias : null
      await tx
        .insert(catalogSchemas)
        .values({
          id: schemaId,
          datasourceId: ds,
          schemaName: s.schema_name,
          schemaAlias: alias,
          isSelected: s.is_selected,
        })
        .onConflictDoUpdate({
          target: catalogSchemas.id,
          set: { schemaAlias: alias, isSelected: s.is_selected },
        })
      for (const t of s.tables) {
        const tableId = catalogIds.table(ds, s.schema_name, t.table_name)
        const tableType = t.table_type ?? 'TABLE'
        // A save that did not read the upstream (no definition given) keeps what is stored.
        const definition = {
          ...(t.view_definition === undefined
            ? {}
            : { viewDefinition: t.view_definition, viewReads: t.view_reads ?? null }),
          ...(t.ancestors === undefined ? {} : { ancestors: t.ancestors }),
          ...(t.primary_key === undefined ? {} : { primaryKey: t.primary_key }),
        }
        await tx
          .insert(catalogTables)
          .values({
            id: tableId,
            datasourceId: ds,
            schemaId,
            tableName: t.table_name,
            tableType,
            isSelected: t.is_selected,
            ...definition,
          })
          .onConflictDoUpdate({
            target: catalogTables.id,
            set: { tableType, isSelected: t.is_selected, ...definition },
          })
        if (!t.columns) continue
        const keep = t.columns.map((c) =>
          catalogIds.column(ds, s.schema_name, t.table_name, c.column_name),
        )
        await this.#replaceColumns(tx, tableId, keep, t.columns, ds, s.schema_name, t.table_name)
      }
    }
  }

  async #replaceColumns(
    tx: Db,
    tableId: string,
    keep: string[],
    columns: SaveColumnInput[],
    ds: string,
    schema: string,
    table: string,
  ): Promise<void> {
    const stored = await tx
      .select({ id: catalogColumns.id })
      .from(catalogColumns)
      .where(eq(catalogColumns.tableId, tableId))
    const gone = stored.map((c) => c.id).filter((id) => !keep.includes(id))
    if (gone.length > 0) await tx.delete(catalogColumns).where(inArray(catalogColumns.id, gone))
    for (const c of columns) {
      const values = {
        ordinalPosition: c.ordinal_position,
        dataType: c.data_type,
        isNullable: c.is_nullable,
        columnDefault: c.column_default ?? null,
        isSelected: c.is_selected ?? true,
      }
      await tx
        .insert(catalogColumns)
        .values({
          id: catalogIds.column(ds, schema, table, c.column_name),
          tableId,
          columnName: c.column_name,
          ...values,
        })
        .onConflictDoUpdate({ target: catalogColumns.id, set: values })
    }
  }

  /** Relationships and anchors on removed tables are deleted with `reason: catalog_saved`. */
  async #dropDependents(m: Mutation, tableIds: string[]): Promise<void> {
    const rels = await m.tx
      .select()
      .from(tableRelationships)
      .where(
        or(
          inArray(tableRelationships.childTableId, tableIds),
          inArray(tableRelationships.parentTableId, tableIds),
        ),
      )
    const relIds = rels.map((r) => r.id)
    const anchors = await m.tx
      .select()
      .from(columnAnchors)
      .where(
        relIds.length
          ? or(
              inArray(columnAnchors.childTableId, tableIds),
              inArray(columnAnchors.relationshipId, relIds),
            )
          : inArray(columnAnchors.childTableId, tableIds),
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
}
