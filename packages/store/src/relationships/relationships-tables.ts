import { index, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core'
import { catalogTables } from '../catalog/catalog-tables.js'
import { datasources } from '../datasources/datasources-tables.js'
import { idColumn, ts } from '../kernel/columns.js'

/** Child-to-parent join edges between stored catalog tables (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const tableRelationships = pgTable(
  'table_relationships',
  {
    id: idColumn(),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    childTableId: uuid('child_table_id')
      .notNull()
      .references(() => catalogTables.id, { onDelete: 'cascade' }),
    childColumnName: text('child_column_name').notNull(),
    parentTableId: uuid('parent_table_id')
      .notNull()
      .references(() => catalogTables.id, { onDelete: 'cascade' }),
    parentColumnName: text('parent_column_name').notNull(),
    createdBy: uuid('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    unique('table_relationships_uq').on(
      t.childTableId,
      t.childColumnName,
      t.parentTableId,
      t.parentColumnName,
    ),
    index('table_relationships_ds_idx').on(t.datasourceId),
  ],
)

/** How a filter column resolves on a child table: a walk or an alias (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const columnAnchors = pgTable(
  'column_anchors',
  {
    id: idColumn(),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    childTableId: uuid('child_table_id')
      .notNull()
      .references(() => catalogTables.id, { onDelete: 'cascade' }),
    resolvedColumnName: text('resolved_column_name').notNull(),
    relationshipId: uuid('relationship_id').references(() => tableRelationships.id, {
      onDelete: 'restrict',
    }),
    actualColumnName: text('actual_column_name'),
    createdBy: uuid('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    unique('column_anchors_uq').on(t.datasourceId, t.childTableId, t.resolvedColumnName),
    index('column_anchors_rel_idx').on(t.relationshipId),
  ],
)
