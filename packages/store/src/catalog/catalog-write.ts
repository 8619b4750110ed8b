// Writing a catalog selection: the rows kept, added and removed, and what depended on removed tables.
import { eq, inArray, or } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import type { Mutation } from '../kernel/mutation.js'
import { anchorSnapshot, relationshipSnapshot } from '../relationships/relationship-rows.js'
import {
  catalogColumns,
  catalogSchemas,
  catalogTables,
  columnAnchors,
  tableRelationships,
} from '../tables.js'
import { catalogIds, type SaveColumnInput, type SaveSchemaInput } from './catalog-view.js'

/** Writes a validated selection: schemas, tables and columns kept, the rest removed. */
export async function writeSelection(
  m: Mutation,
  ds: string,
  input: SaveSchemaInput[],
): Promise<void> {
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
  if (doomed.length > 0) await dropDependents(m, doomed)
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
      await replaceColumns(tx, tableId, keep, t.columns, ds, s.schema_name, t.table_name)
    }
  }
}

async function replaceColumns(
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
async function dropDependents(m: Mutation, tableIds: string[]): Promise<void> {
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
