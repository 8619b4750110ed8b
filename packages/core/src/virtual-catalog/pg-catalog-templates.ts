import { catalogColumns, type VersionedCatalogRelation } from './pg-catalog-columns.js'

/**
 * The SQL of the per-user `pg_catalog`, as templates. Each template is a SELECT over the real
 * catalogs; `palisade.<name>` relations and functions in it are placeholders that the builder
 * (pg-catalog.ts) replaces with trees, never with text:
 *
 * - `palisade.visible_relations (nspname, relname)` and `palisade.visible_columns (nspname,
 *   relname, attnames)`: the session's visible tables and columns, by upstream name, a row per
 *   table; `palisade.visible_schemas (nspname, relnames, lists)`, a row per schema with its
 *   tables and the number of each one's column list in `palisade.column_lists (attlists)`, the
 *   one row of every distinct column list: what the row-per-table lists are made from;
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
const REGCLASS = `pg_catalog.to_regclass(pg_catalog.format('%I.%I', v.nspname, v.relname))::pg_catalog.oid`

/** The condition that type `<alias>` is visible (the `typ` set, and pg_type's filter). */
function visibleType(alias: string): string {
  return `${alias}.typnamespace IN (SELECT s.oid FROM palisade.sys_ns s)
      OR ${alias}.typrelid IN (SELECT r.oid FROM palisade.rel r)
      OR ${alias}.typelem IN (SELECT c.reltype FROM pg_catalog.pg_class c
        JOIN palisade.rel r ON r.oid = c.oid WHERE c.reltype <> 0)
      OR ${alias}.oid IN (SELECT c.oid FROM palisade.col_typ c)
      OR ${alias}.oid IN (SELECT e.typelem FROM pg_catalog.pg_type e
        JOIN palisade.col_typ c ON c.oid = e.oid)
      OR ${alias}.oid IN (SELECT d.typbasetype FROM pg_catalog.pg_type d
        JOIN palisade.col_typ c ON c.oid = d.oid)`
}

const SETS = {
  /** System schemas, always visible. */
  sys_ns: `SELECT n.oid FROM pg_catalog.pg_namespace n
    WHERE n.nspname IN ('pg_catalog', 'information_schema')`,
  sys_rel: `SELECT c.oid FROM pg_catalog.pg_class c
    WHERE c.relnamespace IN (SELECT s.oid FROM palisade.sys_ns s)`,
  /**
   * Visible user relations by the OID each name resolves to upstream: the sets join the
   * catalogs by OID, which PostgreSQL estimates exactly (a join by name and schema it guesses
   * at a few rows for 10,000, and plans nested loops over the whole list).
   */
  rel: `SELECT r.oid FROM (SELECT ${REGCLASS} AS oid FROM palisade.visible_relations v) r
    WHERE r.oid IS NOT NULL`,
  /** The visible columns' names per visible relation, by OID. */
  col_list: `SELECT ${REGCLASS} AS oid, v.attnames FROM palisade.visible_columns v`,
  /** Visible columns of visible relations (`array_position … IS NOT NULL`: estimated as kept). */
  att: `SELECT a.attrelid, a.attnum FROM palisade.col_list v
    JOIN pg_catalog.pg_attribute a ON a.attrelid = v.oid
    WHERE a.attnum > 0 AND NOT a.attisdropped
      AND pg_catalog.array_position(v.attnames, a.attname) IS NOT NULL`,
  /**
   * Columns of visible relations that this user may not see (denied, not exposed, dropped),
   * read from the same list as `att` rather than as what `att` lacks: PostgreSQL estimates an
   * anti-join of two sets of 100,000 columns at one row and then loops over the whole list.
   */
  denied_att: `SELECT a.attrelid, a.attnum FROM palisade.col_list v
    JOIN pg_catalog.pg_attribute a ON a.attrelid = v.oid
    WHERE a.attnum > 0
      AND (a.attisdropped OR pg_catalog.array_position(v.attnames, a.attname) IS NULL)`,
  /** Schemas: system ones and those the visible relations are listed in (by name: no lookups). */
  ns: `SELECT s.oid FROM palisade.sys_ns s
    UNION SELECT n.oid FROM pg_catalog.pg_namespace n
      WHERE n.nspname IN (SELECT v.nspname FROM palisade.visible_schemas v)`,
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
  /**
   * Types of visible columns that are not built in (built-in types are listed anyway, and
   * nearly every column has one): the few columns of user types are checked one by one
   * instead of computing every visible column.
   */
  col_typ: `SELECT a.atttypid AS oid FROM pg_catalog.pg_attribute a
    WHERE a.atttypid >= '16384'::pg_catalog.oid AND a.attnum > 0 AND NOT a.attisdropped
      AND palisade.is_att(a.attrelid, a.attnum)`,
  /**
   * Types: built in, the row types of visible relations and their arrays, and the types of
   * visible columns with their element and base types. A type only a hidden column uses (an
   * enum whose labels would tell its values, say) is not listed.
   */
  typ: `SELECT t.oid FROM pg_catalog.pg_type t WHERE ${visibleType('t')}`,
} as const

/**
 * Probes: the membership tests of the sets above for one object, `palisade.<probe>(key, …)`
 * in a template, with `palisade.key(n)` standing for the n-th argument. A probe looks its
 * object up by key in the real catalogs and by name in the visible lists, so a statement
 * about one table reads that table's catalog rows, where a set reads every visible object
 * (at 10,000 tables, 100,000 columns: tens of milliseconds per set). The keyed forms of the
 * virtual relations below filter with probes; pg-catalog.ts picks them for statements that
 * name their objects by key. Each is `SELECT <boolean>`, true exactly when the set holds the
 * object. A probe's own aliases start with `probe_`, unique per probe, so no argument names one.
 */
const PROBES = {
  /** `rel`: relation key(1) is visible. */
  is_rel: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class probe_rel_c
      JOIN pg_catalog.pg_namespace probe_rel_n ON probe_rel_n.oid = probe_rel_c.relnamespace
      WHERE probe_rel_c.oid = palisade.key(1) AND EXISTS (SELECT 1
        FROM palisade.visible_schemas probe_rel_v WHERE probe_rel_v.nspname = probe_rel_n.nspname
          AND probe_rel_c.relname = ANY (probe_rel_v.relnames)))`,
  /** `att`: column key(2) of relation key(1) is visible. */
  is_att: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute probe_att_a
      JOIN pg_catalog.pg_class probe_att_c ON probe_att_c.oid = probe_att_a.attrelid
      JOIN pg_catalog.pg_namespace probe_att_n ON probe_att_n.oid = probe_att_c.relnamespace
      WHERE probe_att_a.attrelid = palisade.key(1) AND probe_att_a.attnum = palisade.key(2)
        AND probe_att_a.attnum > 0 AND NOT probe_att_a.attisdropped
        AND pg_catalog.array_position((SELECT probe_att_l.attlists[probe_att_v.lists[
            pg_catalog.array_position(probe_att_v.relnames, probe_att_c.relname)]]::pg_catalog.name[]
          FROM palisade.visible_schemas probe_att_v, palisade.column_lists probe_att_l
          WHERE probe_att_v.nspname = probe_att_n.nspname), probe_att_a.attname) IS NOT NULL)`,
  /** `denied_att`: relation key(1) is visible and one of its columns key(2) (an array) is not. */
  denied_cols: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute probe_denied_a
      JOIN pg_catalog.pg_class probe_denied_c ON probe_denied_c.oid = probe_denied_a.attrelid
      JOIN pg_catalog.pg_namespace probe_denied_n ON probe_denied_n.oid = probe_denied_c.relnamespace
      JOIN LATERAL (SELECT probe_denied_l.attlists[probe_denied_s.lists[
          pg_catalog.array_position(probe_denied_s.relnames, probe_denied_c.relname)]]::pg_catalog.name[]
          AS attnames
        FROM palisade.visible_schemas probe_denied_s, palisade.column_lists probe_denied_l
        WHERE probe_denied_s.nspname = probe_denied_n.nspname
          AND probe_denied_c.relname = ANY (probe_denied_s.relnames)) probe_denied_v ON true
      WHERE probe_denied_a.attrelid = palisade.key(1) AND probe_denied_a.attnum = ANY (palisade.key(2))
        AND probe_denied_a.attnum > 0 AND (probe_denied_a.attisdropped
          OR pg_catalog.array_position(probe_denied_v.attnames, probe_denied_a.attname) IS NULL))`,
  /** `denied_dep`: object key(2) of catalog key(1) reads a hidden column. */
  reads_denied: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_depend probe_dep_p
      WHERE probe_dep_p.classid = palisade.key(1) AND probe_dep_p.objid = palisade.key(2)
        AND probe_dep_p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
        AND probe_dep_p.refobjsubid > 0
        AND palisade.denied_cols(probe_dep_p.refobjid, ARRAY[probe_dep_p.refobjsubid]::pg_catalog.int2[]))`,
  /** `idx`: index key(1) is visible. */
  is_idx: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_index probe_idx_i
      WHERE probe_idx_i.indexrelid = palisade.key(1) AND palisade.is_rel(probe_idx_i.indrelid)
        AND NOT palisade.denied_cols(probe_idx_i.indrelid, probe_idx_i.indkey::pg_catalog.int2[])
        AND NOT palisade.reads_denied('pg_catalog.pg_class'::pg_catalog.regclass, probe_idx_i.indexrelid))`,
  /** `user_con`: constraint key(1) is a visible user constraint. */
  is_user_con: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint probe_con_co
      WHERE probe_con_co.oid = palisade.key(1) AND palisade.is_rel(probe_con_co.conrelid)
        AND (probe_con_co.confrelid = 0 OR palisade.is_rel(probe_con_co.confrelid))
        AND NOT palisade.denied_cols(probe_con_co.conrelid, probe_con_co.conkey)
        AND NOT palisade.denied_cols(probe_con_co.confrelid, probe_con_co.confkey)
        AND NOT palisade.reads_denied('pg_catalog.pg_constraint'::pg_catalog.regclass, probe_con_co.oid))`,
  /** `attrdef`: column default key(1) is visible. */
  is_attrdef: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attrdef probe_def_ad
      WHERE probe_def_ad.oid = palisade.key(1)
        AND palisade.is_att(probe_def_ad.adrelid, probe_def_ad.adnum)
        AND NOT palisade.reads_denied('pg_catalog.pg_attrdef'::pg_catalog.regclass, probe_def_ad.oid))`,
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

/** pg_class columns that describe rows a filter hides or grants: reported as unknown or none. */
const CLASS_HIDDEN_COUNTS = {
  relpages: '0',
  reltuples: '(-1)::pg_catalog.float4',
  relallvisible: '0',
  relallfrozen: '0',
  relacl: 'NULL::pg_catalog.aclitem[]',
}

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
      ...CLASS_HIDDEN_COUNTS,
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
  // Tested per row rather than as `x.oid IN typ`: a listing of a few kinds of types (psql's
  // domains, an ORM's enums) then stops at the built-in ones without computing the set.
  pg_type: filtered('pg_type', visibleType('x')),
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
 * Keyed forms of the relations whose sets are costly: the same rows, filtered with probes.
 * For statements that name their objects by key (`c.oid = '16390'`, `attrelid = …`), where
 * the fence's pushed key leaves a few candidate rows; listings keep the set forms, which
 * compute each set once instead of probing per row.
 */
const KEYED: Record<string, string | ((serverVersion: number) => string)> = {
  pg_class: replacing(
    'pg_class',
    {
      ...CLASS_HIDDEN_COUNTS,
      relnatts: `CASE WHEN palisade.is_rel(x.oid)
        THEN (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
          WHERE a.attrelid = x.oid AND a.attnum > 0
            AND palisade.is_att(a.attrelid, a.attnum))::pg_catalog.int2 ELSE x.relnatts END`,
      relchecks: `CASE WHEN palisade.is_rel(x.oid)
        THEN (SELECT pg_catalog.count(*) FROM pg_catalog.pg_constraint k
          WHERE k.conrelid = x.oid AND k.contype = 'c'
            AND palisade.is_user_con(k.oid))::pg_catalog.int2 ELSE x.relchecks END`,
    },
    `x.relnamespace IN (SELECT s.oid FROM palisade.sys_ns s)
      OR palisade.is_rel(x.oid) OR palisade.is_idx(x.oid)`,
  ),
  pg_attribute: filtered(
    'pg_attribute',
    `x.attrelid IN (SELECT s.oid FROM palisade.sys_rel s)
      OR palisade.is_att(x.attrelid, x.attnum) OR palisade.is_idx(x.attrelid)`,
  ),
  pg_attrdef: filtered('pg_attrdef', 'palisade.is_attrdef(x.oid)'),
  pg_constraint: filtered(
    'pg_constraint',
    `x.connamespace IN (SELECT s.oid FROM palisade.sys_ns s) OR palisade.is_user_con(x.oid)`,
  ),
  pg_index: filtered(
    'pg_index',
    `x.indrelid IN (SELECT s.oid FROM palisade.sys_rel s) OR palisade.is_idx(x.indexrelid)`,
  ),
  pg_inherits: filtered(
    'pg_inherits',
    'palisade.is_rel(x.inhrelid) AND palisade.is_rel(x.inhparent)',
  ),
}

/** Key columns of the keyed forms: an equality on one leaves few candidate rows. */
const KEY_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  pg_class: ['oid', 'relname'],
  pg_attribute: ['attrelid'],
  pg_attrdef: ['oid', 'adrelid'],
  pg_constraint: ['oid', 'conrelid', 'confrelid', 'conindid'],
  pg_index: ['indexrelid', 'indrelid'],
  pg_inherits: ['inhrelid', 'inhparent'],
}

/** Whether an equality on `column` makes `relation` a keyed lookup (one with a keyed form). */
export function isCatalogKey(relation: string, column: string): boolean {
  return Object.hasOwn(KEY_COLUMNS, relation) && (KEY_COLUMNS[relation] ?? []).includes(column)
}

/** The keyed form of a virtual relation, or undefined when it has none. */
export function keyedCatalogTemplate(name: string, serverVersion: number): string | undefined {
  if (!Object.hasOwn(KEYED, name)) return undefined
  const template = KEYED[name]
  return typeof template === 'function' ? template(serverVersion) : template
}

/** Whether `palisade.<name>(…)` in a template is a probe. */
export function isCatalogProbe(name: string): boolean {
  return Object.hasOwn(PROBES, name)
}

/**
 * Expressions over the virtual catalog with one argument, `palisade.key(1)`: the user's value,
 * substituted per call (catalog-guards.ts). Each is `SELECT <expression>`.
 */
const EXPRESSIONS = {
  /** `pg_partition_ancestors(rel)`: the relation and its visible ancestors, if it is visible. */
  pg_partition_ancestors: `SELECT pg_catalog.unnest(ARRAY(
    WITH RECURSIVE palisade_up(relid) AS (
      SELECT c.oid FROM palisade.pg_class c WHERE c.oid = palisade.key(1)::pg_catalog.oid
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
  if (Object.hasOwn(PROBES, name)) return PROBES[name as keyof typeof PROBES]
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
