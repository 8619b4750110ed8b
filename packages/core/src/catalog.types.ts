/** A column of the stored, exposed upstream catalog (admin-api 7). */
export interface CatalogColumn {
  name: string
  /** PostgreSQL type name as `format_type` prints it, e.g. `integer`, `text`, `timestamp with time zone`. */
  type: string
  nullable?: boolean
}

export type TableKind = 'TABLE' | 'VIEW' | 'MATERIALIZED VIEW'

export interface CatalogTable {
  name: string
  kind?: TableKind
  columns: readonly CatalogColumn[]
}

/** An exposed schema; `alias` is the name SQL users see (admin-api 7), policies match `name`. */
export interface CatalogSchema {
  name: string
  alias?: string | null
  tables: readonly CatalogTable[]
}

/** The exposed part of one datasource's stored catalog. Only exposed objects belong here. */
export interface Catalog {
  schemas: readonly CatalogSchema[]
}

/** A child-to-parent join edge (admin-api 11.1); schema names are upstream names. */
export interface TableRelationship {
  id: string
  childSchema: string
  childTable: string
  childColumn: string
  parentSchema: string
  parentTable: string
  parentColumn: string
}

/** How a filter column missing from a table resolves: a walk or an alias (admin-api 11). */
export interface ColumnAnchor {
  schema: string
  table: string
  resolvedColumn: string
  relationshipId?: string | null
  actualColumn?: string | null
}
