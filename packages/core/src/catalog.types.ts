/** A column of the stored, exposed upstream catalog (docs/admin-api.md#catalog-discovery). */
export interface CatalogColumn {
  name: string
  /** PostgreSQL type name as `format_type` prints it, e.g. `integer`, `text`, `timestamp with time zone`. */
  type: string
  nullable?: boolean
  /** Catalog tags of the column (`pii.email`), for tag-targeted policies. */
  tags?: readonly string[]
}

export type TableKind = 'TABLE' | 'VIEW' | 'MATERIALIZED VIEW' | 'FOREIGN TABLE'

/** A relation named by its upstream schema and name. */
export interface RelationName {
  schema: string
  table: string
}

/** A table below another in an inheritance or partition hierarchy, with its ancestors nearest first. */
export interface InheritanceChild extends RelationName {
  ancestors: readonly RelationName[]
}

export interface CatalogTable {
  name: string
  kind?: TableKind
  /** Catalog tags of the table (`finance`), for tag-targeted row filters and table denies. */
  tags?: readonly string[]
  columns: readonly CatalogColumn[]
  /**
   * Views and materialized views: the defining query as `pg_get_viewdef` prints it with an
   * empty search path (every relation and non-built-in function schema-qualified).
   */
  definition?: string | null
  /**
   * Views and materialized views: every relation the definition reads, directly or through
   * other views (upstream names). Used by the fail-closed rule for relations that cannot be
   * expanded; when absent, the definition's direct reads are used.
   */
  reads?: readonly RelationName[] | null
  /**
   * Tables this one inherits from or is a partition of, nearest first, transitively (upstream
   * names). Policies that target any of them apply to this table too.
   */
  ancestors?: readonly RelationName[] | null
  /**
   * Tables: every table that inherits from or is a partition of this one, however deep, exposed
   * or not, each with its own ancestors. Reading this table reads their rows under their own
   * policies (docs/policies.md#inheritance-children-and-partitions). Exposed descendants are
   * found from their `ancestors` as well.
   */
  descendants?: readonly InheritanceChild[] | null
  /**
   * Tables: the primary key's columns in key order. A query that groups by them may select
   * the table's other columns (functional dependency), as PostgreSQL allows.
   */
  primaryKey?: readonly string[] | null
}

/** An exposed schema; `alias` is the name SQL users see (docs/admin-api.md#catalog-discovery), policies match `name`. */
export interface CatalogSchema {
  name: string
  alias?: string | null
  tables: readonly CatalogTable[]
}

/** The exposed part of one datasource's stored catalog. Only exposed objects belong here. */
export interface Catalog {
  schemas: readonly CatalogSchema[]
}

/** A child-to-parent join edge (docs/admin-api.md#relationships-anchors-and-their-checks); schema names are upstream names. */
export interface TableRelationship {
  id: string
  childSchema: string
  childTable: string
  childColumn: string
  parentSchema: string
  parentTable: string
  parentColumn: string
}

/** How a filter column missing from a table resolves: a walk or an alias (docs/admin-api.md#relationships-anchors-and-their-checks). */
export interface ColumnAnchor {
  schema: string
  table: string
  resolvedColumn: string
  relationshipId?: string | null
  actualColumn?: string | null
}
