import { catalogColumns, type VersionedCatalogRelation } from './pg-catalog-columns.js'

/**
 * The SQL of the per-user `pg_catalog`, as templates. Each template is a SELECT over the real
 * catalogs; `palisade.<name>` relations and functions in it are placeholders that the builder
 * (pg-catalog.ts) replaces with trees, never with text:
 *
 * - `palisade.visible_relations (nspname, relname, oid)` and `palisade.visible_columns (nspname,
 *   relname, oid, attnames)`: the session's visible tables and columns, with the OID each name
 *   resolves to upstream (NULL when none);
 * - `palisade.<set>`: another template below (a building block or a virtual relation);
 * - `palisade.schema_label(x)`: the visible name of an upstream schema name (aliases);
 * - `palisade.username()`, `palisade.datasource()`: the Palisade identity.
 *
 * Objects are matched by name to the session's catalog, then followed by OID. The rules: user
 * relations appear when visible; their columns when visible; indexes, constraints and defaults
 * only when they involve no denied column (by their key columns and by `pg_depend`); types when
 * built in, in a visible schema, or the row type of a visible relation; functions, operators and
 * the like only when built in. Anything that would report rows a filter hides (statistics, row
 * counts) or other sessions (activity) is not part of the virtual catalog at all.
 */

/**
 * Building blocks: sets of OIDs the virtual relations filter by. Each is a materialized CTE of
 * the rewritten statement's WITH (pg-catalog.ts `catalogListsWith`), computed at most once per
 * statement. Membership is tested with `EXISTS (… WHERE key = x.key)` where it stands alone in
 * a WHERE (PostgreSQL turns it into a semi-join), and with `key IN (SELECT …)` inside an OR:
 * there PostgreSQL prices an EXISTS as run once per row even when it will hash it. Nothing
 * inside a set is correlated through a set-returning function, which would make PostgreSQL
 * read the visible lists once per row.
 */
const SETS = {
  /** System schemas, always visible. */
  sys_ns: `SELECT n.oid FROM pg_catalog.pg_namespace n
    WHERE n.nspname IN ('pg_catalog', 'information_schema')`,
  sys_rel: `SELECT c.oid FROM pg_catalog.pg_class c
    WHERE c.relnamespace IN (SELECT s.oid FROM palisade.sys_ns s)`,
  /** Visible user relations (the lists carry each one's OID, resolved by name). */
  rel: `SELECT v.oid FROM palisade.visible_relations v WHERE v.oid IS NOT NULL`,
  /** Visible columns of visible relations (`array_position … IS NOT NULL`: estimated as kept). */
  att: `SELECT a.attrelid, a.attnum FROM palisade.visible_columns v
    JOIN pg_catalog.pg_attribute a ON a.attrelid = v.oid
    WHERE a.attnum > 0 AND NOT a.attisdropped
      AND pg_catalog.array_position(v.attnames, a.attname) IS NOT NULL`,
  /**
   * Columns of visible relations that this user may not see (denied, not exposed, dropped),
   * read from the same list as `att` rather than as what `att` lacks: PostgreSQL estimates an
   * anti-join of two sets of 100,000 columns at one row and then loops over the whole list.
   */
  denied_att: `SELECT a.attrelid, a.attnum FROM palisade.visible_columns v
    JOIN pg_catalog.pg_attribute a ON a.attrelid = v.oid
    WHERE a.attnum > 0
      AND (a.attisdropped OR pg_catalog.array_position(v.attnames, a.attname) IS NULL)`,
  /** Schemas: system ones and those holding a visible relation. */
  ns: `SELECT s.oid FROM palisade.sys_ns s
    UNION SELECT c.relnamespace FROM pg_catalog.pg_class c
      WHERE EXISTS (SELECT 1 FROM palisade.rel r WHERE r.oid = c.oid)`,
  /** Objects (indexes, constraints, defaults) whose definition reads a hidden column. */
  denied_dep: `SELECT p.classid, p.objid FROM pg_catalog.pg_depend p
    JOIN palisade.denied_att d ON d.attrelid = p.refobjid AND d.attnum = p.refobjsubid
    WHERE p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass`,
  /** Indexes of visible relations that touch no hidden column. */
  idx: `SELECT i.indexrelid FROM pg_catalog.pg_index i
    WHERE EXISTS (SELECT 1 FROM palisade.rel r WHERE r.oid = i.indrelid)
      AND NOT EXISTS (SELECT 1 FROM palisade.denied_att d
        WHERE d.attrelid = i.indrelid AND d.attnum = ANY (i.indkey::pg_catalog.int2[]))
      AND NOT EXISTS (SELECT 1 FROM palisade.denied_dep p
        WHERE p.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND p.objid = i.indexrelid)`,
  /** Constraints between visible relations on visible columns. */
  user_con: `SELECT co.oid FROM pg_catalog.pg_constraint co
    WHERE EXISTS (SELECT 1 FROM palisade.rel r WHERE r.oid = co.conrelid)
      AND (co.confrelid = 0 OR co.confrelid IN (SELECT r.oid FROM palisade.rel r))
      AND NOT EXISTS (SELECT 1 FROM palisade.denied_att d
        WHERE d.attrelid = co.conrelid AND d.attnum = ANY (co.conkey))
      AND NOT EXISTS (SELECT 1 FROM palisade.denied_att d
        WHERE d.attrelid = co.confrelid AND d.attnum = ANY (co.confkey))
      AND NOT EXISTS (SELECT 1 FROM palisade.denied_dep p
        WHERE p.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND p.objid = co.oid)`,
  /** Constraints: system ones, and the visible user ones. */
  con: `SELECT co.oid FROM pg_catalog.pg_constraint co
    WHERE co.connamespace IN (SELECT s.oid FROM palisade.sys_ns s)
    UNION ALL SELECT u.oid FROM palisade.user_con u`,
  /** Column defaults of visible columns whose expression reads no hidden column. */
  attrdef: `SELECT ad.oid FROM pg_catalog.pg_attrdef ad
    JOIN palisade.att v ON v.attrelid = ad.adrelid AND v.attnum = ad.adnum
    WHERE NOT EXISTS (SELECT 1 FROM palisade.denied_dep p
      WHERE p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND p.objid = ad.oid)`,
  /** Types of visible columns. */
  col_typ: `SELECT a.atttypid AS oid FROM pg_catalog.pg_attribute a
    JOIN palisade.att v ON v.attrelid = a.attrelid AND v.attnum = a.attnum`,
  /**
   * Types: built in, the row types of visible relations and their arrays, and the types of
   * visible columns with their element and base types. A type only a hidden column uses (an
   * enum whose labels would tell its values, say) is not listed.
   */
  typ: `SELECT t.oid FROM pg_catalog.pg_type t
    WHERE t.typnamespace IN (SELECT s.oid FROM palisade.sys_ns s)
      OR t.typrelid IN (SELECT r.oid FROM palisade.rel r)
      OR t.typelem IN (SELECT c.reltype FROM pg_catalog.pg_class c JOIN palisade.rel r ON r.oid = c.oid
        WHERE c.reltype <> 0)
      OR t.oid IN (SELECT c.oid FROM palisade.col_typ c)
      OR t.oid IN (SELECT e.typelem FROM pg_catalog.pg_type e JOIN palisade.col_typ c ON c.oid = e.oid)
      OR t.oid IN (SELECT d.typbasetype FROM pg_catalog.pg_type d
        JOIN palisade.col_typ c ON c.oid = d.oid)`,
} as const

/** A filter-only virtual relation: every column of the real one, only the visible rows. */
function filtered(relation: string, where: string): string {
  return `SELECT x.* FROM pg_catalog.${relation} x WHERE ${where}`
}

/** A virtual relation that replaces some columns, for the upstream's column list. */
function replacing(
  relation: VersionedCatalogRelation,
  replacements: Readonly<Record<string, string>>,
  where: string,
  extra: (serverVersion: number) => string[] = () => [],
  joins = '',
): (serverVersion: number) => string {
  return (serverVersion) => {
    const columns = catalogColumns(relation, serverVersion).map((column) => {
      const replacement = replacements[column]
      return replacement === undefined ? `x.${column}` : `${replacement} AS ${column}`
    })
    columns.push(...extra(serverVersion))
    return `SELECT ${columns.join(', ')} FROM pg_catalog.${relation} x ${joins} WHERE ${where}`
  }
}

/** Catalog relations nothing of a read-only user's objects lives in: empty for everyone. */
const EMPTY = [
  'pg_trigger',
  'pg_policy',
  'pg_rewrite',
  'pg_statistic_ext',
  'pg_publication',
  'pg_publication_rel',
  'pg_publication_namespace',
  'pg_sequence',
  'pg_foreign_table',
  'pg_event_trigger',
  'pg_extension',
  // Upstream roles are not Palisade users: no role is listed.
  'pg_roles',
  'pg_auth_members',
] as const

const SYSTEM_OBJECT = `x.oid < '16384'::pg_catalog.oid`
const SYSTEM_SCHEMAS = `('pg_catalog', 'information_schema')`
const VISIBLE_NAME = (schema: string, name: string) =>
  `(x.${schema}, x.${name}) IN (SELECT v.nspname, v.relname FROM palisade.visible_relations v)`

/** The virtual relations: name → template (or a template per upstream version). */
const RELATIONS: Record<string, string | ((serverVersion: number) => string)> = {
  pg_namespace: `SELECT x.oid, palisade.schema_label(x.nspname) AS nspname, x.nspowner,
      NULL::pg_catalog.aclitem[] AS nspacl
    FROM pg_catalog.pg_namespace x WHERE x.oid IN (SELECT n.oid FROM palisade.ns n)`,
  // Row counts and page counts of a table describe rows a filter hides: reported as unknown.
  // Column and check-constraint counts of a user table count only what the user sees.
  pg_class: replacing(
    'pg_class',
    {
      relpages: '0',
      reltuples: '(-1)::pg_catalog.float4',
      relallvisible: '0',
      relallfrozen: '0',
      relacl: 'NULL::pg_catalog.aclitem[]',
      relnatts: `CASE WHEN x.oid IN (SELECT r.oid FROM palisade.rel r)
        THEN COALESCE(natts.n, 0)::pg_catalog.int2 ELSE x.relnatts END`,
      relchecks: `CASE WHEN x.oid IN (SELECT r.oid FROM palisade.rel r)
        THEN COALESCE(checks.n, 0)::pg_catalog.int2 ELSE x.relchecks END`,
    },
    `x.relnamespace IN (SELECT s.oid FROM palisade.sys_ns s)
      OR x.oid IN (SELECT r.oid FROM palisade.rel r)
      OR x.oid IN (SELECT i.indexrelid FROM palisade.idx i)`,
    () => [],
    // Counted per relation once, not per row: PostgreSQL drops both joins when nobody reads them.
    `LEFT JOIN (SELECT v.attrelid, pg_catalog.count(*) AS n FROM palisade.att v
        GROUP BY v.attrelid) natts ON natts.attrelid = x.oid
      LEFT JOIN (SELECT k.conrelid, pg_catalog.count(*) AS n FROM palisade.user_con c
        JOIN pg_catalog.pg_constraint k ON k.oid = c.oid WHERE k.contype = 'c'
        GROUP BY k.conrelid) checks ON checks.conrelid = x.oid`,
  ),
  pg_attribute: filtered(
    'pg_attribute',
    `(x.attrelid, x.attnum) IN (SELECT v.attrelid, v.attnum FROM palisade.att v)
      OR x.attrelid IN (SELECT s.oid FROM palisade.sys_rel s)
      OR x.attrelid IN (SELECT i.indexrelid FROM palisade.idx i)`,
  ),
  pg_attrdef: filtered('pg_attrdef', `x.oid IN (SELECT d.oid FROM palisade.attrdef d)`),
  pg_constraint: filtered('pg_constraint', `x.oid IN (SELECT c.oid FROM palisade.con c)`),
  pg_index: filtered(
    'pg_index',
    `x.indexrelid IN (SELECT i.indexrelid FROM palisade.idx i)
      OR x.indrelid IN (SELECT s.oid FROM palisade.sys_rel s)`,
  ),
  pg_description: filtered(
    'pg_description',
    `x.objoid < '16384'::pg_catalog.oid
      OR (x.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND x.objsubid = 0
        AND (x.objoid IN (SELECT r.oid FROM palisade.rel r)
          OR x.objoid IN (SELECT i.indexrelid FROM palisade.idx i)))
      OR (x.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass
        AND (x.objoid, x.objsubid) IN (SELECT v.attrelid, v.attnum::pg_catalog.int4 FROM palisade.att v))
      OR (x.classoid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
        AND x.objoid IN (SELECT n.oid FROM palisade.ns n))
      OR (x.classoid = 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND x.objoid IN (SELECT c.oid FROM palisade.con c))
      OR (x.classoid = 'pg_catalog.pg_type'::pg_catalog.regclass
        AND x.objoid IN (SELECT t.oid FROM palisade.typ t))`,
  ),
  pg_type: filtered('pg_type', `x.oid IN (SELECT t.oid FROM palisade.typ t)`),
  pg_proc: filtered('pg_proc', `x.pronamespace IN (SELECT s.oid FROM palisade.sys_ns s)`),
  pg_operator: filtered('pg_operator', `x.oprnamespace IN (SELECT s.oid FROM palisade.sys_ns s)`),
  pg_opclass: filtered('pg_opclass', `x.opcnamespace IN (SELECT s.oid FROM palisade.sys_ns s)`),
  pg_opfamily: filtered('pg_opfamily', `x.opfnamespace IN (SELECT s.oid FROM palisade.sys_ns s)`),
  pg_collation: filtered('pg_collation', `x.collnamespace IN (SELECT n.oid FROM palisade.ns n)`),
  pg_enum: filtered('pg_enum', `x.enumtypid IN (SELECT t.oid FROM palisade.typ t)`),
  pg_range: filtered('pg_range', `x.rngtypid IN (SELECT t.oid FROM palisade.typ t)`),
  pg_inherits: filtered(
    'pg_inherits',
    `x.inhrelid IN (SELECT r.oid FROM palisade.rel r)
      AND x.inhparent IN (SELECT r.oid FROM palisade.rel r)`,
  ),
  pg_partitioned_table: filtered(
    'pg_partitioned_table',
    `x.partrelid IN (SELECT r.oid FROM palisade.rel r)
      AND NOT EXISTS (SELECT 1 FROM palisade.denied_att d WHERE d.attrelid = x.partrelid
        AND (x.partexprs IS NOT NULL OR d.attnum = ANY (x.partattrs::pg_catalog.int2[])))`,
  ),
  pg_am: filtered('pg_am', 'true'),
  pg_cast: filtered('pg_cast', SYSTEM_OBJECT),
  pg_language: filtered('pg_language', SYSTEM_OBJECT),
  pg_tablespace: `SELECT x.oid, x.spcname, x.spcowner, NULL::pg_catalog.aclitem[] AS spcacl,
      x.spcoptions FROM pg_catalog.pg_tablespace x WHERE ${SYSTEM_OBJECT}`,
  pg_database: replacing(
    'pg_database',
    { datname: 'palisade.datasource()', datacl: 'NULL::pg_catalog.aclitem[]' },
    'x.datname = pg_catalog.current_database()',
    // PostgreSQL 17 renamed daticulocale; psql 15 and 16 still ask for it in `\l`.
    (version) => (version >= 170000 ? ['x.datlocale AS daticulocale'] : []),
  ),
  pg_tables: `SELECT palisade.schema_label(x.schemaname) AS schemaname, x.tablename,
      palisade.username() AS tableowner, x.tablespace, x.hasindexes, x.hasrules, x.hastriggers,
      x.rowsecurity
    FROM pg_catalog.pg_tables x
    WHERE x.schemaname IN ${SYSTEM_SCHEMAS} OR ${VISIBLE_NAME('schemaname', 'tablename')}`,
  pg_views: `SELECT palisade.schema_label(x.schemaname) AS schemaname, x.viewname,
      palisade.username() AS viewowner,
      CASE WHEN x.schemaname IN ${SYSTEM_SCHEMAS} THEN x.definition END AS definition
    FROM pg_catalog.pg_views x
    WHERE x.schemaname IN ${SYSTEM_SCHEMAS} OR ${VISIBLE_NAME('schemaname', 'viewname')}`,
  pg_matviews: `SELECT palisade.schema_label(x.schemaname) AS schemaname, x.matviewname,
      palisade.username() AS matviewowner, x.tablespace, x.hasindexes, x.ispopulated,
      NULL::pg_catalog.text AS definition
    FROM pg_catalog.pg_matviews x WHERE ${VISIBLE_NAME('schemaname', 'matviewname')}`,
  pg_indexes: `SELECT palisade.schema_label(x.schemaname) AS schemaname, x.tablename,
      x.indexname, x.tablespace, x.indexdef
    FROM pg_catalog.pg_indexes x
    JOIN pg_catalog.pg_namespace n ON n.nspname = x.schemaname
    JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = x.indexname
    WHERE n.nspname IN ${SYSTEM_SCHEMAS} OR c.oid IN (SELECT i.indexrelid FROM palisade.idx i)`,
  ...Object.fromEntries(EMPTY.map((name) => [name, filtered(name, 'false')])),
}

/**
 * Expressions over the virtual catalog with one argument, `palisade.key()`: the user's value,
 * substituted per call (catalog-guards.ts). Each is `SELECT <expression>`.
 */
const EXPRESSIONS = {
  /** `pg_partition_ancestors(rel)`: the relation and its visible ancestors, if it is visible. */
  pg_partition_ancestors: `SELECT pg_catalog.unnest(ARRAY(
    WITH RECURSIVE palisade_up(relid) AS (
      SELECT c.oid FROM palisade.pg_class c WHERE c.oid = palisade.key()::pg_catalog.oid
      UNION SELECT i.inhparent FROM palisade.pg_inherits i
        JOIN palisade_up u ON i.inhrelid = u.relid)
    SELECT u.relid::pg_catalog.regclass FROM palisade_up u))`,
} as const

/** The template of a keyed expression, or undefined for another name. */
export function expressionTemplate(name: string): string | undefined {
  return Object.hasOwn(EXPRESSIONS, name)
    ? EXPRESSIONS[name as keyof typeof EXPRESSIONS]
    : undefined
}

export type VirtualPgCatalogRelation = string

/** Whether `pg_catalog.<name>` exists in the virtual catalog. */
export function isVirtualPgCatalogRelation(name: string): boolean {
  return Object.hasOwn(RELATIONS, name)
}

/** The template of a building block or virtual relation, or undefined for another name. */
export function catalogTemplate(name: string, serverVersion: number): string | undefined {
  if (Object.hasOwn(SETS, name)) return SETS[name as keyof typeof SETS]
  if (!Object.hasOwn(RELATIONS, name)) return undefined
  const template = RELATIONS[name]
  return typeof template === 'function' ? template(serverVersion) : template
}

/** Names of every virtual relation, for tests and docs. */
export const VIRTUAL_PG_CATALOG_RELATIONS: readonly string[] = Object.keys(RELATIONS)

/** Whether `palisade.<name>` in a template is a building block (a set of OIDs). */
export function isCatalogSet(name: string): boolean {
  return Object.hasOwn(SETS, name)
}
