import { beforeAll, expect, it } from 'vitest'
import { rewrite } from '../src/rewrite.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { VIRTUAL_PG_CATALOG_RELATIONS } from '../src/virtual-catalog/pg-catalog-templates.js'
import { describeOnDatabases, type TestDatabase } from './fixtures/databases.js'
import { makeSession, policy, run, runError, type SessionOptions } from './fixtures/session.js'

/**
 * The per-user pg_catalog (docs/rewrite.md#the-per-user-pg_catalog): what psql, JDBC and ORMs read to list
 * tables and columns shows only the session's objects, and no catalog function or OID cast
 * reaches a hidden one. The user here is denied `customers.ssn` and the `secrets` table; the
 * fixture has an index, a check constraint and a comment on `ssn`, and a comment on `secrets`.
 */
const DENIED: SessionOptions['policies'] = [
  policy('column_deny', {
    target: { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
  }),
  policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } }),
]

describeOnDatabases('virtual pg_catalog', (db) => {
  let session: CompiledSession
  let version: number
  /** OIDs of hidden objects, read directly from the upstream (what an attacker might guess). */
  let hidden: Record<'secrets' | 'secretsType' | 'ssnIndex' | 'ssnCheck', number>
  const q = <T = Record<string, unknown>>(sql: string) => run<T>(db(), session, sql)
  const oidOf = async (sql: string) =>
    Number((await db().query<{ oid: string }>(sql)).rows[0]?.oid ?? Number.NaN)

  beforeAll(async () => {
    const d: TestDatabase = db()
    const v = await d.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
    version = Number(v.rows[0]?.v)
    session = await makeSession(d.catalog, { policies: DENIED, serverVersion: version })
    hidden = {
      secrets: await oidOf("SELECT 'public.secrets'::regclass::oid AS oid"),
      secretsType: await oidOf("SELECT 'public.secrets'::regtype::oid AS oid"),
      ssnIndex: await oidOf("SELECT 'public.customers_ssn_idx'::regclass::oid AS oid"),
      ssnCheck: await oidOf("SELECT oid FROM pg_constraint WHERE conname = 'customers_ssn_format'"),
    }
  })

  it("lists visible tables the way psql's \\dt asks, and never a hidden one", async () => {
    const rows = await q<{ Schema: string; Name: string; Owner: string }>(
      `SELECT n.nspname AS "Schema", c.relname AS "Name",
         pg_catalog.pg_get_userbyid(c.relowner) AS "Owner"
       FROM pg_catalog.pg_class c
       LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
       WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog'
         AND n.nspname !~ '^pg_toast' AND n.nspname <> 'information_schema'
         AND pg_catalog.pg_table_is_visible(c.oid)
       ORDER BY 1, 2`,
    )
    expect(rows.map((r) => r.Name)).toEqual([
      'customers',
      'orders',
      'payments',
      'products',
      'refunds',
      'tenants',
    ])
    // The owner is the Palisade user, never an upstream role.
    expect(new Set(rows.map((r) => r.Owner))).toEqual(new Set(['alice']))
  })

  it("describes a table like psql's \\d: columns without the denied one, types, defaults", async () => {
    const rows = await q<{ attname: string; type: string; def: string | null }>(
      `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
         (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) FROM pg_catalog.pg_attrdef d
          WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef) AS def
       FROM pg_catalog.pg_attribute a
       WHERE a.attrelid = 'public.customers'::pg_catalog.regclass AND a.attnum > 0
         AND NOT a.attisdropped
       ORDER BY a.attnum`,
    )
    expect(rows).toEqual([
      { attname: 'id', type: 'integer', def: null },
      { attname: 'tenant_id', type: 'integer', def: null },
      { attname: 'name', type: 'text', def: null },
      { attname: 'email', type: 'text', def: null },
      { attname: 'region', type: 'text', def: "'north'::text" },
    ])
    expect(await q("SELECT attname FROM pg_attribute WHERE attname = 'ssn'")).toEqual([])
  })

  it('shows indexes and constraints only when they involve no hidden column or table', async () => {
    const indexes = await q<{ relname: string; def: string }>(
      `SELECT c2.relname, pg_catalog.pg_get_indexdef(i.indexrelid, 0, true) AS def
       FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i
       WHERE c.oid = 'customers'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid
       ORDER BY 1`,
    )
    expect(indexes).toEqual([
      {
        relname: 'customers_pkey',
        def: 'CREATE UNIQUE INDEX customers_pkey ON customers USING btree (id)',
      },
    ])
    const constraints = await q<{ conname: string; def: string }>(
      `SELECT conname, pg_catalog.pg_get_constraintdef(oid, true) AS def
       FROM pg_catalog.pg_constraint WHERE conrelid = 'customers'::regclass AND contype <> 'n'
       ORDER BY 1`,
    )
    expect(constraints).toEqual([
      { conname: 'customers_pkey', def: 'PRIMARY KEY (id)' },
      {
        conname: 'customers_tenant_id_fkey',
        def: 'FOREIGN KEY (tenant_id) REFERENCES tenants(id)',
      },
    ])
    const named = await q("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%ssn%'")
    expect(named).toEqual([])
  })

  it('answers psql\'s \\d "Referenced by" query with pg_partition_ancestors, hiding hidden OIDs', async () => {
    const rows = await q<{ conname: string; ontable: string }>(
      `SELECT conname, conrelid::pg_catalog.regclass::text AS ontable
       FROM pg_catalog.pg_constraint c
       WHERE confrelid IN (SELECT pg_catalog.pg_partition_ancestors('public.customers'::regclass)
                           UNION ALL VALUES ('public.customers'::pg_catalog.regclass))
         AND contype = 'f' AND conparentid = 0
       ORDER BY conname`,
    )
    expect(rows).toEqual([{ conname: 'orders_customer_id_fkey', ontable: 'orders' }])
    expect(await q(`SELECT pg_partition_ancestors(${hidden.secrets}) AS a`)).toEqual([])
  })

  it('keeps comments on visible objects and drops those on denied columns and hidden tables', async () => {
    const [row] = await q(
      `SELECT obj_description('customers'::regclass, 'pg_class') AS t,
         col_description('customers'::regclass, 4) AS email,
         col_description('customers'::regclass, 5) AS ssn`,
    )
    expect(row).toEqual({ t: 'shop customers', email: 'contact address', ssn: null })
    const texts = await q<{ description: string }>(
      "SELECT description FROM pg_description WHERE description IN ('the vault', 'social security number')",
    )
    expect(texts).toEqual([])
  })

  it('reports no row counts, and counts only visible columns and checks', async () => {
    const [row] = await q(
      "SELECT reltuples, relpages, relnatts, relchecks FROM pg_class WHERE relname IN ('customers') ",
    )
    // customers has 6 columns and one check constraint, both involving the denied ssn.
    expect(row).toEqual({ reltuples: -1, relpages: 0, relnatts: 5, relchecks: 0 })
    const [orders] = await q(
      "SELECT relnatts, relchecks FROM pg_class WHERE oid = 'public.orders'::regclass",
    )
    expect(orders).toEqual({ relnatts: 7, relchecks: 1 })
  })

  it('answers OID probes of hidden objects with NULL, whatever the function or cast', async () => {
    const [row] = await q(
      `SELECT format_type(${hidden.secretsType}, NULL) AS type,
         ${hidden.secrets}::regclass AS rel, '${hidden.secrets}'::regclass AS rel_text,
         ${hidden.secretsType}::oid::regtype AS regtype,
         pg_table_is_visible(${hidden.secrets}) AS visible,
         pg_get_indexdef(${hidden.ssnIndex}) AS index,
         pg_get_constraintdef(${hidden.ssnCheck}) AS con,
         obj_description(${hidden.secrets}, 'pg_class') AS comment,
         format_type(CASE WHEN random() < 2 THEN ${hidden.secretsType} END, NULL) AS volatile`,
    )
    expect(row).toEqual({
      type: null,
      rel: null,
      rel_text: null,
      regtype: null,
      visible: null,
      index: null,
      con: null,
      comment: null,
      volatile: null,
    })
    // A visible object's OID still works: the guard passes what the catalog shows.
    const [ok] = await q(
      "SELECT format_type(reltype, NULL) AS t, (oid::int)::regclass AS r FROM pg_class WHERE oid = 'customers'::regclass",
    )
    expect(ok).toEqual({ t: 'customers', r: 'customers' })
  })

  it('prints an expression only against the relation it belongs to (no hidden column names)', async () => {
    const [row] = await q(
      `SELECT pg_get_expr(conbin, conrelid) AS own, pg_get_expr(conbin, 'customers'::regclass) AS other
       FROM pg_constraint WHERE conname = 'orders_status_set'`,
    )
    // Attribute 5 of customers is the denied ssn: printing against it would name the column.
    expect(row).toEqual({ own: "(status <> ''::text)", other: null })
  })

  it('lists no type that only a hidden column uses, nor its labels', async () => {
    expect(await q("SELECT typname FROM pg_type WHERE typname = 'clearance'")).toEqual([])
    expect(await q("SELECT enumlabel FROM pg_enum WHERE enumlabel LIKE 'codename%'")).toEqual([])
    // Types of visible columns, and built-in ones, are still there.
    expect(
      await q("SELECT typname FROM pg_type WHERE typname IN ('int4', 'customers')"),
    ).toHaveLength(2)
  })

  it('has no hidden table in pg_type, pg_tables or any name list', async () => {
    const names = await q<{ name: string }>(
      `SELECT typname::text AS name FROM pg_type
       UNION ALL SELECT relname::text FROM pg_class
       UNION ALL SELECT tablename::text FROM pg_tables
       UNION ALL SELECT conname::text FROM pg_constraint`,
    )
    const leaked = names.map((r) => r.name).filter((n) => /secrets|ssn/.test(n))
    expect(leaked).toEqual([])
  })

  it('answers statistics, other sessions and server settings as missing relations', async () => {
    for (const relation of [
      'pg_stats',
      'pg_statistic',
      'pg_stat_activity',
      'pg_stat_user_tables',
      'pg_settings',
      'pg_authid',
    ]) {
      const error = await runError(db(), session, `SELECT * FROM pg_catalog.${relation}`)
      expect(error).toEqual({
        code: '42P01',
        message: `relation "pg_catalog.${relation}" does not exist`,
      })
    }
    expect(await runError(db(), session, "SELECT 'pg_statistic'::regclass")).toMatchObject({
      code: '42P01',
    })
  })

  it('answers correlated catalog subqueries per outer row as the joins would, hiding the same', async () => {
    // Drivers look up defaults, constraints and indexes per column or table with subqueries
    // keyed on the outer row (`d.adrelid = a.attrelid`); those keys run inside the fence.
    const perRow = await q<{ attname: string; def: string | null }>(
      `SELECT a.attname, (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) FROM pg_catalog.pg_attrdef d
          WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum) AS def
        FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = 'public.customers'::regclass AND a.attnum > 0 ORDER BY a.attnum`,
    )
    expect(perRow.map((r) => r.attname)).not.toContain('ssn')
    expect(perRow.find((r) => r.attname === 'region')?.def).toBe("'north'::text")
    const counts = `SELECT c.relname,
        (SELECT count(*)::int FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid) AS cons,
        (SELECT count(*)::int FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid) AS idx
      FROM pg_catalog.pg_class c WHERE c.oid IN ('public.customers'::regclass, 'public.orders'::regclass)
      ORDER BY 1`
    const joined = `SELECT c.relname,
        (SELECT count(*)::int FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class r ON r.oid = k.conrelid
          WHERE r.relname = c.relname AND r.relnamespace = c.relnamespace) AS cons,
        (SELECT count(*)::int FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class r ON r.oid = i.indrelid
          WHERE r.relname = c.relname AND r.relnamespace = c.relnamespace) AS idx
      FROM pg_catalog.pg_class c WHERE c.oid IN ('public.customers'::regclass, 'public.orders'::regclass)
      ORDER BY 1`
    const correlated = await q(counts)
    expect(correlated).toEqual(await q(joined))
    // The outer alias `x` is the fence's own name inside: the key stays outside, same answer.
    expect(await q(counts.replaceAll(/\bc\./g, 'x.').replace('pg_class c', 'pg_class x'))).toEqual(
      correlated,
    )
    // The denied column's check constraint and index are not counted.
    const direct = await db().query<{ cons: number; idx: number }>(
      `SELECT (SELECT count(*)::int FROM pg_constraint WHERE conrelid = 'public.customers'::regclass) AS cons,
        (SELECT count(*)::int FROM pg_index WHERE indrelid = 'public.customers'::regclass) AS idx`,
    )
    const customers = correlated.find((r) => r['relname'] === 'customers')
    expect(customers?.['cons']).toBe((direct.rows[0]?.cons ?? 0) - 1)
    expect(customers?.['idx']).toBe((direct.rows[0]?.idx ?? 0) - 1)
    // Comments looked up per row (`\dt+`), and a hidden table's comment not found by its OID.
    expect(
      await q(`SELECT c.relname, obj_description(c.oid, 'pg_class') AS comment,
          obj_description(h.id, 'pg_class') AS hidden
        FROM pg_catalog.pg_class c, (VALUES (${hidden.secrets}::oid)) h(id)
        WHERE c.oid = 'public.customers'::regclass`),
    ).toEqual([{ relname: 'customers', comment: 'shop customers', hidden: null }])
    // A hidden table's OID as the outer key finds nothing.
    const hiddenRows = await q<{ n: number; k: number }>(
      `SELECT (SELECT count(*)::int FROM pg_catalog.pg_attribute a WHERE a.attrelid = h.id) AS n,
          (SELECT count(*)::int FROM pg_catalog.pg_class k WHERE k.oid = h.id) AS k
        FROM (VALUES (${hidden.secrets}::oid)) h(id)`,
    )
    expect(hiddenRows).toEqual([{ n: 0, k: 0 }])
  })

  it('answers name patterns without wildcards (as drivers send for one table) like equalities', async () => {
    const names = async (pattern: string) =>
      (
        await q<{ relname: string }>(
          `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname LIKE 'public' AND c.relname LIKE '${pattern}' ORDER BY 1`,
        )
      ).map((r) => r.relname)
    expect(await names('customers')).toEqual(['customers'])
    expect(await names('secrets')).toEqual([])
    expect(await names('customer_')).toEqual(['customers'])
    expect(await names('cust%')).toEqual(['customers', 'customers_pkey'])
  })

  it('answers statements about one object by its OID as listings do, hiding the same', async () => {
    // A literal OID makes a statement keyed: its catalog relations probe the few candidate
    // rows instead of computing whole visible sets. Each statement is asked both ways.
    const customers = await oidOf("SELECT 'public.customers'::regclass::oid AS oid")
    const both = async (sql: (key: string) => string) => {
      // The literal form takes the probes (their aliases name them), the cast form the sets.
      expect(rewrite(sql(String(customers)), session).statements.at(-1)?.sql).toContain('probe_')
      const keyed = await q(sql(String(customers)))
      expect(keyed).toEqual(await q(sql("'public.customers'::pg_catalog.regclass")))
      return keyed
    }
    expect(
      await both(
        (k) => `SELECT c.relname, c.relnatts, c.relchecks, tc.relname AS toast
          FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_class tc ON tc.oid = c.reltoastrelid
          WHERE c.oid = ${k}`,
      ),
    ).toEqual([{ relname: 'customers', relnatts: 5, relchecks: 0, toast: null }])
    expect(
      await both(
        (k) => `SELECT a.attname, (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid)
            FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum) AS def
          FROM pg_catalog.pg_attribute a WHERE a.attrelid = ${k} AND a.attnum > 0 ORDER BY a.attnum`,
      ),
    ).toEqual([
      { attname: 'id', def: null },
      { attname: 'tenant_id', def: null },
      { attname: 'name', def: null },
      { attname: 'email', def: null },
      { attname: 'region', def: "'north'::text" },
    ])
    expect(
      await both(
        (k) => `SELECT c2.relname, con.conname FROM pg_catalog.pg_class c, pg_catalog.pg_class c2,
            pg_catalog.pg_index i LEFT JOIN pg_catalog.pg_constraint con
              ON (conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p', 'u', 'x'))
          WHERE c.oid = ${k} AND c.oid = i.indrelid AND i.indexrelid = c2.oid ORDER BY 1`,
      ),
    ).toEqual([{ relname: 'customers_pkey', conname: 'customers_pkey' }])
    expect(
      await both(
        (k) => `SELECT conname FROM pg_catalog.pg_constraint
          WHERE conrelid = ${k} AND contype IN ('p', 'f', 'c', 'u') ORDER BY 1`,
      ),
    ).toEqual([{ conname: 'customers_pkey' }, { conname: 'customers_tenant_id_fkey' }])
    // Keys from a join to a relation on the left (ON or WHERE) make a fence LATERAL.
    expect(
      await both(
        (k) => `SELECT r.conname, c.relname, n.nspname FROM pg_catalog.pg_constraint r,
            pg_catalog.pg_class c, pg_catalog.pg_namespace n
          WHERE r.conrelid = ${k} AND c.oid = r.confrelid AND n.oid = c.relnamespace`,
      ),
    ).toEqual([{ conname: 'customers_tenant_id_fkey', relname: 'tenants', nspname: 'public' }])
    expect(
      await both(
        (k) => `SELECT ic.relname, t.typname FROM pg_catalog.pg_index i
            JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
            LEFT JOIN pg_catalog.pg_type t ON t.oid = ic.reltype
          WHERE i.indrelid = ${k} ORDER BY 1`,
      ),
    ).toEqual([{ relname: 'customers_pkey', typname: null }])
    // The hidden objects by their OIDs, through every keyed relation: nothing.
    const none = [
      `SELECT relname FROM pg_catalog.pg_class WHERE oid = ${hidden.secrets}`,
      `SELECT relname FROM pg_catalog.pg_class WHERE oid = ${hidden.ssnIndex}`,
      `SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = ${hidden.secrets}`,
      `SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = ${hidden.ssnIndex}`,
      `SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = ${customers} AND attname = 'ssn'`,
      `SELECT indexrelid FROM pg_catalog.pg_index WHERE indexrelid = ${hidden.ssnIndex}`,
      `SELECT indexrelid FROM pg_catalog.pg_index WHERE indrelid = ${hidden.secrets}`,
      `SELECT conname FROM pg_catalog.pg_constraint WHERE oid = ${hidden.ssnCheck}`,
      `SELECT conname FROM pg_catalog.pg_constraint WHERE conrelid = ${hidden.secrets}`,
      `SELECT oid FROM pg_catalog.pg_attrdef WHERE adrelid = ${hidden.secrets}`,
      `SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhrelid = ${hidden.secrets}`,
      // The real pg_index names the hidden index among the table's: the fence still hides it.
      `SELECT c2.relname FROM pg_catalog.pg_class c2, pg_catalog.pg_index i
        WHERE i.indrelid = ${customers} AND i.indexrelid = c2.oid AND c2.relname LIKE '%ssn%'`,
      `SELECT c2.relname FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c2
        ON c2.oid = i.indexrelid WHERE i.indrelid = ${customers} AND c2.oid = ${hidden.ssnIndex}`,
    ]
    for (const sql of none) expect(await q(sql), sql).toEqual([])
  })

  it("answers psql's anchored name patterns (\\d schema.table) like equalities", async () => {
    const names = async (pattern: string) =>
      (
        await q<{ relname: string }>(
          `SELECT c.relname FROM pg_catalog.pg_class c
            LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relname OPERATOR(pg_catalog.~) '${pattern}' COLLATE pg_catalog.default
              AND n.nspname OPERATOR(pg_catalog.~) '^(public)$' COLLATE pg_catalog.default
            ORDER BY 1`,
        )
      ).map((r) => r.relname)
    expect(await names('^(customers)$')).toEqual(['customers'])
    expect(await names('^customers$')).toEqual(['customers'])
    expect(await names('^(secrets)$')).toEqual([])
    expect(await names('^(customers_ssn_idx)$')).toEqual([])
    expect(await names('^(customers.*)$')).toEqual(['customers', 'customers_pkey'])
  })

  it('lists the types of one kind without the hidden ones (psql and ORMs ask for domains, enums)', async () => {
    const kinds = await q<{ typname: string }>(
      `SELECT t.typname FROM pg_catalog.pg_type t
        JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
        WHERE t.typtype IN ('c', 'e', 'd') AND n.nspname = 'public' ORDER BY 1`,
    )
    expect(kinds.map((r) => r.typname)).not.toContain('secrets')
    // An enum only the hidden table's column uses: neither it nor its labels.
    expect(kinds.map((r) => r.typname)).not.toContain('clearance')
    const labels = await q(
      `SELECT t.typname, e.enumlabel FROM pg_catalog.pg_type t
        LEFT JOIN pg_catalog.pg_enum e ON e.enumtypid = t.oid WHERE t.typtype = 'e'`,
    )
    expect(JSON.stringify(labels)).not.toMatch(/clearance|codename/)
    expect(kinds.map((r) => r.typname)).toContain('customers')
    expect(
      await q(`SELECT typname FROM pg_catalog.pg_type WHERE oid = ${hidden.secretsType}`),
    ).toEqual([])
  })

  it("takes no user CTE for its own lists and sets, at any depth (they would widen what's visible)", async () => {
    // A user's CTEs named like Palisade's own, listing the hidden table: renamed, never read.
    const own = `palisade_visible_relations AS (SELECT 'public'::name AS nspname, 'secrets'::name AS relname,
        ${hidden.secrets}::oid AS oid),
      palisade_rel AS (SELECT ${hidden.secrets}::oid AS oid)`
    const probe = `SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = ${hidden.secrets}`
    expect(await q(`WITH ${own} ${probe}`)).toEqual([])
    expect(await q(`SELECT * FROM (WITH ${own} ${probe}) s`)).toEqual([])
    expect(
      await q(`WITH ${own} SELECT count(*)::int AS n FROM pg_catalog.pg_class c
        WHERE c.oid IN (SELECT r.oid FROM palisade_rel r) AND c.relname = 'secrets'`),
    ).toEqual([{ n: 0 }])
  })

  it('answers current_schemas as an array: compared with ANY, subscripted, as a column', async () => {
    // pgjdbc asks `n.nspname = ANY(current_schemas(true))` when it resolves a type.
    const rows = await q<{ in_path: boolean; first: string; path: string }>(
      `SELECT n.nspname = ANY (current_schemas(true)) AS in_path, (current_schemas(true))[1] AS first,
          current_schemas(false)::text AS path
        FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pg_catalog'`,
    )
    expect(rows).toEqual([{ in_path: true, first: 'pg_catalog', path: '{public}' }])
  })

  it('shows one database, named after the datasource', async () => {
    const rows = await q('SELECT datname, pg_get_userbyid(datdba) AS owner FROM pg_database')
    expect(rows).toEqual([{ datname: 'shop', owner: 'alice' }])
  })

  it('resolves bare catalog names and catalog name literals to pg_catalog', async () => {
    const rows = await q<{ n: string }>(
      "SELECT count(*)::int AS n FROM pg_class WHERE oid = 'pg_catalog.pg_class'::regclass",
    )
    expect(rows).toEqual([{ n: 1 }])
  })

  it('keeps the shape of every virtual relation identical to the real one', async () => {
    for (const relation of VIRTUAL_PG_CATALOG_RELATIONS) {
      const real = await db().query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = 'pg_catalog.${relation}'::regclass
         AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      )
      const { statements } = rewrite(`SELECT * FROM pg_catalog.${relation} LIMIT 1`, session)
      const fields = await db().columns(statements[0]?.sql ?? '')
      const expected = real.rows.map((r) => r.name)
      // The one addition: older psql clients read pg_database.daticulocale on newer servers.
      if (relation === 'pg_database' && version >= 170000) expected.push('daticulocale')
      expect(fields, relation).toEqual(expected)
    }
  })

  it('shows only the system catalog to a user who sees no table', async () => {
    const nobody = await makeSession(db().catalog, {
      accessMode: 'policy_required',
      serverVersion: version,
    })
    const rows = await run(
      db(),
      nobody,
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')`,
    )
    expect(rows).toEqual([])
    expect(
      await run(db(), nobody, "SELECT nspname FROM pg_namespace WHERE nspname = 'public'"),
    ).toEqual([])
  })

  it('shows schema aliases in pg_namespace and pg_tables', async () => {
    const catalog = {
      schemas: db().catalog.schemas.map((s) => (s.name === 'sales' ? { ...s, alias: 'crm' } : s)),
    }
    const aliased = await makeSession(catalog, { serverVersion: version })
    const rows = await run<{ nspname: string }>(
      db(),
      aliased,
      "SELECT nspname::text FROM pg_namespace WHERE nspname IN ('sales', 'crm')",
    )
    expect(rows).toEqual([{ nspname: 'crm' }])
    const tables = await run(
      db(),
      aliased,
      "SELECT schemaname::text, tablename::text FROM pg_tables WHERE tablename = 'regions'",
    )
    expect(tables).toEqual([{ schemaname: 'crm', tablename: 'regions' }])
  })
})

describeOnDatabases('virtual catalogs are fenced', (db) => {
  it('evaluates no user condition on a hidden catalog row (the error would reveal it)', async () => {
    const session = await makeSession(db().catalog, { policies: DENIED })
    // A condition that fails only on the hidden row: if it ever ran on that row, the error
    // (division by zero) would prove the row exists.
    for (const [relation, column] of [
      ['pg_catalog.pg_class', 'relname'],
      ['pg_catalog.pg_type', 'typname'],
      ['pg_catalog.pg_tables', 'tablename'],
      ['pg_catalog.pg_attribute', 'attname'],
      ['pg_catalog.pg_description', 'description'],
      ['information_schema.tables', 'table_name'],
      ['information_schema.columns', 'column_name'],
    ] as const) {
      const probe =
        column === 'description'
          ? "'the vault'"
          : column === 'attname' || column === 'column_name'
            ? "'ssn'"
            : "'secrets'"
      const rows = await run(
        db(),
        session,
        `SELECT count(*)::int AS n FROM ${relation} WHERE 1 / (CASE WHEN ${column}::text = ${probe} THEN 0 ELSE 1 END) = 1`,
      )
      expect(rows, relation).toHaveLength(1)
    }
  })
})
