import type { RelationName, TableKind } from '@palisade/core'
import type { UpstreamColumn } from '@palisade/store'
import type { UpstreamReader } from './upstream-reader.js'

/** What the catalog readers use of a connection: plain queries. */
export type QueryReader = Pick<UpstreamReader, 'query'>

/** One upstream table, view, materialized view or foreign table. */
export interface UpstreamTable {
  schema_name: string
  table_name: string
  table_type: TableKind
}

/**
 * A relation with what view expansion needs (its definition and what it reads) and what policy
 * inheritance needs (the tables it inherits from or is a partition of, nearest first).
 */
export interface UpstreamRelation extends UpstreamTable {
  view_definition: string | null
  view_reads: RelationName[] | null
  ancestors: RelationName[] | null
  /** Tables: the primary key's columns in key order. */
  primary_key: string[] | null
}

/** A single-column foreign key whose parent column is a primary or single-column unique key. */
export interface UpstreamForeignKey {
  constraint_name: string
  child_schema_name: string
  child_table_name: string
  child_column_name: string
  parent_schema_name: string
  parent_table_name: string
  parent_column_name: string
}

/** Schemas that discovery never lists (docs/admin-api.md#catalog-discovery). */
const USER_SCHEMA = `n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'`

/**
 * Tables, partitioned tables and their partitions, views, materialized views and foreign
 * tables. A partition or inheritance child carries its ancestors' policies (readRelations).
 */
const RELATION = `c.relkind IN ('r', 'p', 'v', 'm', 'f')`

/** Upstream schema names, sorted, without system schemas. */
export async function readSchemas(reader: QueryReader): Promise<string[]> {
  const rows = await reader.query<{ schema_name: string }>(
    `SELECT n.nspname AS schema_name FROM pg_catalog.pg_namespace n
     WHERE ${USER_SCHEMA} ORDER BY 1`,
  )
  return rows.map((r) => r.schema_name)
}

const TABLE_TYPE = `CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
  WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END`

/** The tables of the given schemas, sorted by schema and name. */
export async function readTables(
  reader: QueryReader,
  schemas: readonly string[],
): Promise<UpstreamTable[]> {
  if (schemas.length === 0) return []
  return reader.query<UpstreamTable>(
    `SELECT n.nspname AS schema_name, c.relname AS table_name, ${TABLE_TYPE} AS table_type
     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE ${RELATION} AND ${USER_SCHEMA} AND n.nspname = ANY($1::text[])
     ORDER BY 1, 2`,
    [[...schemas]],
  )
}

/**
 * The relations of the given schemas with view definitions and the relations each view reads,
 * directly or through other views (from the rewrite rules' dependencies). Definitions are
 * printed with an empty search path, so every user relation and function in them is
 * schema-qualified and means the same thing wherever it is expanded.
 */
export async function readRelations(
  reader: QueryReader,
  schemas: readonly string[],
): Promise<UpstreamRelation[]> {
  if (schemas.length === 0) return []
  const [setting] = await reader.query<{ path: string }>(
    `SELECT pg_catalog.current_setting('search_path') AS path`,
  )
  await reader.query(`SELECT pg_catalog.set_config('search_path', '', false)`)
  try {
    const rows = await reader.query<
      Omit<UpstreamRelation, 'view_reads' | 'ancestors'> & {
        reads: string[] | null
        ancestors: string[] | null
      }
    >(
      `WITH RECURSIVE up(child, parent, depth) AS (
         SELECT i.inhrelid, i.inhparent, 1 FROM pg_catalog.pg_inherits i
         UNION ALL
         SELECT up.child, i.inhparent, up.depth + 1 FROM up
         JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.parent),
       deps(view_oid, rel_oid) AS (
         SELECT r.ev_class, d.refobjid FROM pg_catalog.pg_rewrite r
         JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
           AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refobjid <> r.ev_class
         UNION
         SELECT deps.view_oid, d.refobjid FROM deps
         JOIN pg_catalog.pg_rewrite r ON r.ev_class = deps.rel_oid
         JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
           AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
           AND d.refobjid <> r.ev_class)
       SELECT n.nspname AS schema_name, c.relname AS table_name, ${TABLE_TYPE} AS table_type,
         CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid) END
           AS view_definition,
         CASE WHEN c.relkind IN ('v', 'm') THEN ARRAY(
           SELECT pg_catalog.json_build_object('schema', dn.nspname, 'table', dc.relname)::text
           FROM deps JOIN pg_catalog.pg_class dc ON dc.oid = deps.rel_oid
           JOIN pg_catalog.pg_namespace dn ON dn.oid = dc.relnamespace
           WHERE deps.view_oid = c.oid AND dc.relkind IN ('r', 'p', 'v', 'm', 'f')
           GROUP BY dn.nspname, dc.relname ORDER BY dn.nspname, dc.relname) END AS reads,
         (SELECT pg_catalog.array_agg(pg_catalog.json_build_object('schema', an.nspname,
             'table', ac.relname)::text ORDER BY up.depth, an.nspname, ac.relname)
            FROM up JOIN pg_catalog.pg_class ac ON ac.oid = up.parent
            JOIN pg_catalog.pg_namespace an ON an.oid = ac.relnamespace
           WHERE up.child = c.oid) AS ancestors,
         (SELECT pg_catalog.array_agg(a.attname::text ORDER BY k.ord)
            FROM pg_catalog.pg_constraint con,
              pg_catalog.unnest(con.conkey) WITH ORDINALITY AS k(num, ord)
            JOIN pg_catalog.pg_attribute a ON a.attnum = k.num
           WHERE con.conrelid = c.oid AND con.contype = 'p' AND a.attrelid = c.oid)
           AS primary_key
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE ${RELATION} AND ${USER_SCHEMA} AND n.nspname = ANY($1::text[])
       ORDER BY 1, 2`,
      [[...schemas]],
    )
    const names = (list: string[] | null) =>
      list ? list.map((r) => JSON.parse(r) as RelationName) : null
    return rows.map(({ reads, ancestors, ...row }) => ({
      ...row,
      view_reads: names(reads),
      ancestors: names(ancestors),
    }))
  } finally {
    await reader.query(`SELECT pg_catalog.set_config('search_path', $1, false)`, [
      setting?.path ?? '',
    ])
  }
}

/**
 * The columns of the given tables in column order. `data_type` is `format_type` (as core's
 * catalog expects) and `column_default` is null for generated columns, as in
 * `information_schema.columns`.
 */
export async function readColumns(
  reader: QueryReader,
  tables: readonly { schema: string; table: string }[],
): Promise<UpstreamColumn[]> {
  // In the order of the statement's ORDER BY (names sort by bytes), so the slices' answers
  // follow one another in the order one statement would give.
  const wanted = [...new Map(tables.map((t) => [`${t.schema}\u0000${t.table}`, t])).values()]
  wanted.sort((a, b) => byName(a.schema, b.schema) || byName(a.table, b.table))
  const out: UpstreamColumn[] = []
  // A slice of tables per statement, with a turn between: each answer is decoded in a short stretch.
  for (let start = 0; start < wanted.length; start += TABLES_PER_COLUMN_READ) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve))
    out.push(...(await readColumnsOf(reader, wanted.slice(start, start + TABLES_PER_COLUMN_READ))))
  }
  return out
}

const byName = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** Tables whose columns one statement of `readColumns` reads. */
const TABLES_PER_COLUMN_READ = 2500

async function readColumnsOf(
  reader: QueryReader,
  wanted: readonly { schema: string; table: string }[],
): Promise<UpstreamColumn[]> {
  const rows = await reader.query<UpstreamColumn>(
    `SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
       a.attnum AS ordinal_position, pg_catalog.format_type(a.atttypid, a.atttypmod) AS data_type,
       NOT a.attnotnull AS is_nullable,
       CASE WHEN a.attgenerated = '' THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid) END
         AS column_default
     FROM pg_catalog.pg_attribute a
     JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     JOIN unnest($1::text[], $2::text[]) AS wanted(schema_name, table_name)
       ON wanted.schema_name = n.nspname AND wanted.table_name = c.relname
     LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE ${RELATION} AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY 1, 2, 4`,
    [wanted.map((t) => t.schema), wanted.map((t) => t.table)],
  )
  return rows.map((r) => ({ ...r, ordinal_position: Number(r.ordinal_position) }))
}

/**
 * Single-column foreign keys whose referenced column carries a single-column unique index
 * (a primary key, a unique constraint or a plain unique index), sorted by child then name.
 */
export function readForeignKeys(reader: QueryReader): Promise<UpstreamForeignKey[]> {
  return reader.query<UpstreamForeignKey>(
    `SELECT con.conname AS constraint_name,
       cn.nspname AS child_schema_name, cc.relname AS child_table_name,
       ca.attname AS child_column_name,
       pn.nspname AS parent_schema_name, pc.relname AS parent_table_name,
       pa.attname AS parent_column_name
     FROM pg_catalog.pg_constraint con
     JOIN pg_catalog.pg_class cc ON cc.oid = con.conrelid
     JOIN pg_catalog.pg_namespace cn ON cn.oid = cc.relnamespace
     JOIN pg_catalog.pg_class pc ON pc.oid = con.confrelid
     JOIN pg_catalog.pg_namespace pn ON pn.oid = pc.relnamespace
     JOIN pg_catalog.pg_attribute ca ON ca.attrelid = con.conrelid AND ca.attnum = con.conkey[1]
     JOIN pg_catalog.pg_attribute pa ON pa.attrelid = con.confrelid AND pa.attnum = con.confkey[1]
     WHERE con.contype = 'f' AND cardinality(con.conkey) = 1
       AND EXISTS (
         SELECT 1 FROM pg_catalog.pg_index i
         WHERE i.indrelid = con.confrelid AND i.indisunique AND i.indnatts = 1
           AND i.indkey[0] = con.confkey[1] AND i.indpred IS NULL AND i.indexprs IS NULL)
     ORDER BY 2, 3, 4, 1`,
  )
}
