import type { RelationName } from '@palisade/core'
import { boolean, index, integer, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core'
import { datasources } from '../datasources/datasources-tables.js'

/** Stored catalog schemas; ids are UUIDv5 of the datasource id and the upstream name. */
export const catalogSchemas = pgTable(
  'catalog_schemas',
  {
    id: uuid('id').primaryKey(),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    schemaName: text('schema_name').notNull(),
    schemaAlias: text('schema_alias'),
    isSelected: boolean('is_selected').notNull().default(true),
  },
  (t) => [unique('catalog_schemas_name_uq').on(t.datasourceId, t.schemaName)],
)

/** Stored catalog tables, views and materialized views. */
export const catalogTables = pgTable(
  'catalog_tables',
  {
    id: uuid('id').primaryKey(),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    schemaId: uuid('schema_id')
      .notNull()
      .references(() => catalogSchemas.id, { onDelete: 'cascade' }),
    tableName: text('table_name').notNull(),
    tableType: text('table_type').notNull().default('TABLE'),
    isSelected: boolean('is_selected').notNull().default(true),
    /** Views and materialized views: the defining query, printed with an empty search path. */
    viewDefinition: text('view_definition'),
    /** Views and materialized views: every relation read, directly or through other views. */
    viewReads: jsonb('view_reads').$type<RelationName[]>(),
    /** Tables it inherits from or is a partition of, nearest first (their policies apply). */
    ancestors: jsonb('ancestors').$type<RelationName[]>(),
    /** Tables: the primary key's columns in key order (grouping by them is functional dependency). */
    primaryKey: jsonb('primary_key').$type<string[]>(),
    /**
     * What sessions read of the table (docs/store.md#session-documents): kept by triggers from
     * this row and its selected columns, so a login reads one short text per table.
     */
    sessionDoc: text('session_doc'),
  },
  (t) => [
    unique('catalog_tables_name_uq').on(t.schemaId, t.tableName),
    index('catalog_tables_ds_idx').on(t.datasourceId),
  ],
)

/** Stored catalog columns with their upstream metadata. */
export const catalogColumns = pgTable(
  'catalog_columns',
  {
    id: uuid('id').primaryKey(),
    tableId: uuid('table_id')
      .notNull()
      .references(() => catalogTables.id, { onDelete: 'cascade' }),
    columnName: text('column_name').notNull(),
    ordinalPosition: integer('ordinal_position').notNull(),
    dataType: text('data_type').notNull(),
    isNullable: boolean('is_nullable').notNull().default(true),
    columnDefault: text('column_default'),
    isSelected: boolean('is_selected').notNull().default(true),
  },
  (t) => [unique('catalog_columns_name_uq').on(t.tableId, t.columnName)],
)
