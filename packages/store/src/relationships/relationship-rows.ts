// Relationships and anchors as the admin API and the audit show them, and their reads.
import type { ColumnAnchor, TableRelationship } from '@palisade/core'
import { asc, eq } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import { isoNow } from '../kernel/context.js'
import type { Db } from '../kernel/db.js'
import { catalogSchemas, catalogTables, columnAnchors, tableRelationships } from '../tables.js'

/** A relationship (docs/admin-api.md#relationships-anchors-and-their-checks). */
export interface Relationship {
  id: string
  data_source_id: string
  child_table_id: string
  child_schema_name: string
  child_table_name: string
  child_column_name: string
  parent_table_id: string
  parent_schema_name: string
  parent_table_name: string
  parent_column_name: string
  created_by: string | null
  created_at: string
}

/** A column anchor (docs/admin-api.md#relationships-anchors-and-their-checks); exactly one of relationship_id and actual_column_name is set. */
export interface Anchor {
  id: string
  data_source_id: string
  child_table_id: string
  child_schema_name: string
  child_table_name: string
  resolved_column_name: string
  relationship_id: string | null
  actual_column_name: string | null
  created_by: string | null
  created_at: string
}

export type RelRow = typeof tableRelationships.$inferSelect
export type AnchorRow = typeof columnAnchors.$inferSelect

export async function tableInfo(db: Db, tableId: string) {
  const [row] = await db
    .select({
      id: catalogTables.id,
      ds: catalogTables.datasourceId,
      table: catalogTables.tableName,
      schema: catalogSchemas.schemaName,
    })
    .from(catalogTables)
    .innerJoin(catalogSchemas, eq(catalogSchemas.id, catalogTables.schemaId))
    .where(eq(catalogTables.id, tableId))
  return row
}

/** The API object of a relationship, with schema and table names. */
export async function toRelationship(db: Db, r: RelRow): Promise<Relationship> {
  const child = await tableInfo(db, r.childTableId)
  const parent = await tableInfo(db, r.parentTableId)
  return {
    id: r.id,
    data_source_id: r.datasourceId,
    child_table_id: r.childTableId,
    child_schema_name: child?.schema ?? '',
    child_table_name: child?.table ?? '',
    child_column_name: r.childColumnName,
    parent_table_id: r.parentTableId,
    parent_schema_name: parent?.schema ?? '',
    parent_table_name: parent?.table ?? '',
    parent_column_name: r.parentColumnName,
    created_by: r.createdBy,
    created_at: isoNow(r.createdAt),
  }
}

export async function toAnchor(db: Db, a: AnchorRow): Promise<Anchor> {
  const child = await tableInfo(db, a.childTableId)
  return {
    id: a.id,
    data_source_id: a.datasourceId,
    child_table_id: a.childTableId,
    child_schema_name: child?.schema ?? '',
    child_table_name: child?.table ?? '',
    resolved_column_name: a.resolvedColumnName,
    relationship_id: a.relationshipId,
    actual_column_name: a.actualColumnName,
    created_by: a.createdBy,
    created_at: isoNow(a.createdAt),
  }
}

/** Audit snapshot of a relationship: the object without id and timestamps. */
export async function relationshipSnapshot(db: Db, r: RelRow) {
  const { id: _id, created_at: _c, created_by: _b, ...rest } = await toRelationship(db, r)
  return rest
}

/** Audit snapshot of an anchor. */
export async function anchorSnapshot(db: Db, a: AnchorRow) {
  const { id: _id, created_at: _c, created_by: _b, ...rest } = await toAnchor(db, a)
  return rest
}

/** Relationships and anchors of a datasource in core's shape, for session contexts. */
export async function readLinks(
  db: Db,
  datasourceId: string,
): Promise<{ relationships: TableRelationship[]; anchors: ColumnAnchor[] }> {
  const child = alias(catalogTables, 'child')
  const parent = alias(catalogTables, 'parent')
  const childSchema = alias(catalogSchemas, 'child_schema')
  const parentSchema = alias(catalogSchemas, 'parent_schema')
  const rels = await db
    .select({
      id: tableRelationships.id,
      childSchema: childSchema.schemaName,
      childTable: child.tableName,
      childColumn: tableRelationships.childColumnName,
      parentSchema: parentSchema.schemaName,
      parentTable: parent.tableName,
      parentColumn: tableRelationships.parentColumnName,
    })
    .from(tableRelationships)
    .innerJoin(child, eq(child.id, tableRelationships.childTableId))
    .innerJoin(childSchema, eq(childSchema.id, child.schemaId))
    .innerJoin(parent, eq(parent.id, tableRelationships.parentTableId))
    .innerJoin(parentSchema, eq(parentSchema.id, parent.schemaId))
    .where(eq(tableRelationships.datasourceId, datasourceId))
    .orderBy(asc(tableRelationships.createdAt))
  const anchors = await db
    .select({
      schema: catalogSchemas.schemaName,
      table: catalogTables.tableName,
      resolvedColumn: columnAnchors.resolvedColumnName,
      relationshipId: columnAnchors.relationshipId,
      actualColumn: columnAnchors.actualColumnName,
    })
    .from(columnAnchors)
    .innerJoin(catalogTables, eq(catalogTables.id, columnAnchors.childTableId))
    .innerJoin(catalogSchemas, eq(catalogSchemas.id, catalogTables.schemaId))
    .where(eq(columnAnchors.datasourceId, datasourceId))
    .orderBy(asc(columnAnchors.createdAt))
  return { relationships: rels, anchors }
}
