import { sql } from 'drizzle-orm'
import { index, pgTable, primaryKey, real, text, unique, uuid } from 'drizzle-orm/pg-core'
import { datasources } from '../datasources/datasources-tables.js'
import { idColumn, ts } from '../kernel/columns.js'

/**
 * Tags on catalog tables and columns (docs/policies.md, "Tags"), keyed by upstream names so they
 * survive catalog saves and syncs; `column_name` is '' for a table's own tags. A column dropped
 * upstream loses its tags at the sync that notices it.
 */
export const catalogTags = pgTable(
  'catalog_tags',
  {
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    schemaName: text('schema_name').notNull(),
    tableName: text('table_name').notNull(),
    columnName: text('column_name').notNull().default(''),
    tag: text('tag').notNull(),
    createdBy: uuid('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.datasourceId, t.schemaName, t.tableName, t.columnName, t.tag] }),
    index('catalog_tags_tag_idx').on(t.datasourceId, t.tag),
  ],
)

/**
 * Tags classification proposes for columns, waiting for an admin (docs/policies.md,
 * "Classification"). Only the verdict and its evidence are kept, never a sampled value.
 */
export const catalogTagProposals = pgTable(
  'catalog_tag_proposals',
  {
    id: idColumn(),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    schemaName: text('schema_name').notNull(),
    tableName: text('table_name').notNull(),
    columnName: text('column_name').notNull(),
    tag: text('tag').notNull(),
    /** 0 to 1: how sure the classifier is. */
    confidence: real('confidence').notNull(),
    /** `name`, `values` or `name+values`: what the proposal rests on. */
    evidence: text('evidence').notNull(),
    /** `pending`, then `accepted` or `rejected` (a rejected proposal is not made again). */
    status: text('status').notNull().default('pending'),
    decidedBy: uuid('decided_by'),
    decidedAt: ts('decided_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    unique('catalog_tag_proposals_uq').on(
      t.datasourceId,
      t.schemaName,
      t.tableName,
      t.columnName,
      t.tag,
    ),
    index('catalog_tag_proposals_status_idx')
      .on(t.datasourceId, t.status)
      .where(sql`status = 'pending'`),
  ],
)
