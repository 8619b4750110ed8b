import { catalogColumns, type VersionedCatalogRelation } from './pg-catalog-columns.js'

/**
 * The SQL of the per-user `pg_catalog`, as templates. Each template is a SELECT over the real
 * catalogs; `palisade.<name>` relations and functions in it are placeholders that the builder
 * (pg-catalog.ts) replaces with trees, never with text:
 *
 * - `palisade.visible_relations (nspname, relname)` and `palisade.visible_columns (nspname,
 *   relname, attnames)`: the session's visible tables and columns, as VALUES lists;
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

/** Building blocks: sets of OIDs the virtual relations filter by. */
const SETS = {
  /** System schemas, always visible. */
  sys_ns: `SELECT n.oid FROM pg_catalog.pg_namespace n
    WHERE n.nspname IN ('pg_catalog', 'information_schema')`,
  sys_rel: `SELECT c.oid FROM pg_catalog.pg_class c
    WHERE c.relnamespace IN (SELECT s.oid FROM palisade.sys_ns s)`,
  /** Visible user relations. */
  rel: `SELECT c.oid FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    JOIN palisade.visible_relations v ON v.nspname = n.nspname AND v.relname = c.relname`,
  /** Visible columns of visible relations. */
  att: `SELECT a.attrelid, a.attnum FROM pg_catalog.pg_attribute a
    JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    JOIN palisade.visible_columns v ON v.nspname = n.nspname AND v.relname = c.relname
    WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attname = ANY (v.attnames)`,
  /** Columns of visible relations that this user may not see (denied or not exposed). */
  denied_att: `SELECT a.attrelid, a.attnum FROM pg_catalog.pg_attribute a
    WHERE a.attrelid IN (SELECT r.oid FROM palisade.rel r) AND a.attnum > 0
      AND NOT EXISTS (SELECT 1 FROM palisade.att v WHERE v.attrelid = a.attrelid AND v.attnum = a.attnum)`,
  /** Schemas: system ones and those holding a visible relation. */
  ns: `SELECT s.oid FROM palisade.sys_ns s
    UNION SELECT c.relnamespace FROM pg_catalog.pg_class c WHERE c.oid IN (SELECT r.oid FROM palisade.rel r)`,
  /** Indexes of visible relations that touch no hidden column. */
  idx: `SELECT i.indexrelid FROM pg_catalog.pg_index i
    WHERE i.indrelid IN (SELECT r.oid FROM palisade.rel r)
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(i.indkey::pg_catalog.int2[]) k(attnum)
        JOIN palisade.denied_att d ON d.attrelid = i.indrelid AND d.attnum = k.attnum)
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend p
        JOIN palisade.denied_att d ON d.attrelid = p.refobjid AND d.attnum = p.refobjsubid
        WHERE p.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND p.objid = i.indexrelid
          AND p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass)`,
  /** Constraints: system ones, and those between visible relations on visible columns. */
  con: `SELECT co.oid FROM pg_catalog.pg_constraint co
    WHERE co.connamespace IN (SELECT s.oid FROM palisade.sys_ns s)
      OR (co.conrelid IN (SELECT r.oid FROM palisade.rel r)
        AND (co.confrelid = 0 OR co.confrelid IN (SELECT r.oid FROM palisade.rel r))
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(co.conkey) k(attnum)
          JOIN palisade.denied_att d ON d.attrelid = co.conrelid AND d.attnum = k.attnum)
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(co.confkey) k(attnum)
          JOIN palisade.denied_att d ON d.attrelid = co.confrelid AND d.attnum = k.attnum)
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend p
          JOIN palisade.denied_att d ON d.attrelid = p.refobjid AND d.attnum = p.refobjsubid
          WHERE p.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND p.objid = co.oid
            AND p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass))`,
  /** Column defaults of visible columns whose expression reads no hidden column. */
  attrdef: `SELECT ad.oid FROM pg_catalog.pg_attrdef ad
    JOIN palisade.att v ON v.attrelid = ad.adrelid AND v.attnum = ad.adnum
    WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend p
      JOIN palisade.denied_att d ON d.attrelid = p.refobjid AND d.attnum = p.refobjsubid
      WHERE p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND p.objid = ad.oid
        AND p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass)`,
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
      OR t.typelem IN (SELECT c.reltype FROM pg_catalog.pg_class c
        WHERE c.oid IN (SELECT r.oid FROM palisade.rel r))
      OR t.oid IN (SELECT c.oid FROM palisade.col_typ c)
      OR t.oid IN (SELECT e.typelem FROM pg_catalog.pg_type e
        WHERE e.oid IN (SELECT c.oid FROM palisade.col_typ c))
      OR t.oid IN (SELECT d.typbasetype FROM pg_catalog.pg_type d
        WHERE d.oid IN (SELECT c.oid FROM palisade.col_typ c))`,
  /** Expression trees `pg_get_expr` may print, with the relation each belongs to. */
  expr: `SELECT d.adrelid AS rel, d.adbin::pg_catalog.text AS expr FROM palisade.pg_attrdef d
    UNION ALL SELECT c.conrelid, c.conbin::pg_catalog.text FROM palisade.pg_constraint c
      WHERE c.conbin IS NOT NULL
    UNION ALL SELECT i.indrelid, i.indexprs::pg_catalog.text FROM palisade.pg_index i
      WHERE i.indexprs IS NOT NULL
    UNION ALL SELECT i.indrelid, i.indpred::pg_catalog.text FROM palisade.pg_index i
      WHERE i.indpred IS NOT NULL
    UNION ALL SELECT c.oid, c.relpartbound::pg_catalog.text FROM palisade.pg_class c
      WHERE c.relpartbound IS NOT NULL
    UNION ALL SELECT p.partrelid, p.partexprs::pg_catalog.text FROM palisade.pg_partitioned_table p
      WHERE p.partexprs IS NOT NULL`,
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
): (serverVersion: number) => string {
  return (serverVersion) => {
    const columns = catalogColumns(relation, serverVersion).map((column) => {
      const replacement = replacements[column]
      return replacement === undefined ? `x.${column}` : `${replacement} AS ${column}`
    })
    columns.push(...extra(serverVersion))
    return `SELECT ${columns.join(', ')} FROM pg_catalog.${relation} x WHERE ${where}`
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
  `EXISTS (SELECT 1 FROM palisade.visible_relations v WHERE v.nspname = x.${schema} AND v.relname = x.${name})`

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
        THEN (SELECT pg_catalog.count(*) FROM palisade.att v WHERE v.attrelid = x.oid)::pg_catalog.int2
        ELSE x.relnatts END`,
      relchecks: `CASE WHEN x.oid IN (SELECT r.oid FROM palisade.rel r)
        THEN (SELECT pg_catalog.count(*) FROM palisade.con c JOIN pg_catalog.pg_constraint k
          ON k.oid = c.oid WHERE k.conrelid = x.oid AND k.contype = 'c')::pg_catalog.int2
        ELSE x.relchecks END`,
    },
    `x.relnamespace IN (SELECT s.oid FROM palisade.sys_ns s)
      OR x.oid IN (SELECT r.oid FROM palisade.rel r)
      OR x.oid IN (SELECT i.indexrelid FROM palisade.idx i)`,
  ),
  pg_attribute: filtered(
    'pg_attribute',
    `x.attrelid IN (SELECT s.oid FROM palisade.sys_rel s)
      OR x.attrelid IN (SELECT i.indexrelid FROM palisade.idx i)
      OR EXISTS (SELECT 1 FROM palisade.att v WHERE v.attrelid = x.attrelid AND v.attnum = x.attnum)`,
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
        AND EXISTS (SELECT 1 FROM palisade.att v WHERE v.attrelid = x.objoid AND v.attnum = x.objsubid))
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
