import { expect, it } from 'vitest'
import { rewrite } from '../../src/rewrite.js'
import type { CompiledSession } from '../../src/session/compiled-session.js'
import {
  REDACTED_UPSTREAM_MESSAGE,
  scrubUpstreamError,
  type UpstreamErrorFields,
} from '../../src/upstream-error.js'
import type { TestDatabase } from '../fixtures/databases.js'
import { describeOnDatabases } from '../fixtures/databases.js'
import { makeSession, policy, run, runError } from '../fixtures/session.js'

const customers = { schemas: ['public'], tables: ['customers'] }
const projectSsn = policy('projection', { target: { ...customers, columns: ['ssn'] } })
const REFUSED = /^column "ssn" of table "customers" is projection-constrained/

/** Uses the projection allows: the column filters, joins, groups and orders, and never shows. */
const allowed: [string, string, unknown[]][] = [
  [
    'WHERE equality',
    "SELECT id, name FROM customers WHERE ssn = '333-33-3333'",
    [{ id: 3, name: 'Carol' }],
  ],
  ['WHERE LIKE', "SELECT id FROM customers WHERE ssn LIKE '1%'", [{ id: 1 }]],
  ['IS NULL', 'SELECT id FROM customers WHERE ssn IS NULL', [{ id: 4 }]],
  [
    'JOIN ON the column',
    'SELECT a.id, b.id AS other FROM customers a JOIN customers b ON a.ssn = b.ssn AND a.id < 3 ORDER BY a.id',
    [
      { id: 1, other: 1 },
      { id: 2, other: 2 },
    ],
  ],
  [
    'GROUP BY without output',
    'SELECT count(*)::int AS n FROM customers GROUP BY ssn ORDER BY 1',
    [{ n: 1 }, { n: 1 }, { n: 1 }, { n: 1 }],
  ],
  [
    'an aggregate FILTER',
    "SELECT count(*) FILTER (WHERE ssn LIKE '%-%')::int AS n FROM customers",
    [{ n: 3 }],
  ],
  [
    'ORDER BY',
    'SELECT id FROM customers ORDER BY ssn DESC NULLS LAST',
    [{ id: 3 }, { id: 2 }, { id: 1 }, { id: 4 }],
  ],
  [
    'HAVING',
    "SELECT region FROM customers GROUP BY region HAVING max(ssn) > '2'",
    [{ region: 'south' }],
  ],
  [
    'EXISTS on the column',
    "SELECT o.id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id AND c.ssn LIKE '3%')",
    [{ id: 3 }],
  ],
  [
    'IN a subquery of the column',
    "SELECT id FROM customers WHERE ssn IN (SELECT ssn FROM customers WHERE region = 'north') ORDER BY id",
    [{ id: 1 }],
  ],
  [
    'window ORDER BY',
    'SELECT id, row_number() OVER (ORDER BY ssn)::int AS r FROM customers WHERE ssn IS NOT NULL ORDER BY id',
    [
      { id: 1, r: 1 },
      { id: 2, r: 2 },
      { id: 3, r: 3 },
    ],
  ],
  [
    'DISTINCT ON',
    'SELECT DISTINCT ON (ssn) id FROM customers WHERE id < 3 ORDER BY ssn',
    [{ id: 1 }, { id: 2 }],
  ],
  [
    'a derived table that keeps it for an outer filter',
    "SELECT s.id FROM (SELECT id, ssn AS tax FROM customers) s WHERE s.tax LIKE '2%'",
    [{ id: 2 }],
  ],
  [
    'a CTE that keeps it for an outer join',
    'WITH c AS (SELECT id, ssn FROM customers) SELECT o.id FROM orders o JOIN c ON c.id = o.customer_id AND c.ssn IS NULL',
    [{ id: 4 }],
  ],
  [
    'a set-returning function of it joined, not output',
    'SELECT count(*)::int AS n FROM customers c, generate_series(1, length(c.ssn)) g WHERE c.id = 1',
    [{ n: 11 }],
  ],
  [
    'a VALUES column of the same name',
    'SELECT v.ssn FROM (VALUES (7)) v(ssn), customers c WHERE c.id = 1',
    [{ ssn: 7 }],
  ],
  [
    'a catalog relation beside it',
    "SELECT c.id FROM pg_catalog.pg_namespace n, customers c WHERE n.nspname = 'public' AND c.ssn LIKE '1%'",
    [{ id: 1 }],
  ],
  [
    'a filtering scalar subquery in the select list',
    "SELECT (SELECT count(*) FROM customers WHERE ssn LIKE '1%')::int AS n",
    [{ n: 1 }],
  ],
]

/** Every way of outputting the column, or a value computed from it: each is refused. */
const refused: [string, string][] = [
  ['direct', 'SELECT ssn FROM customers'],
  ['beside another column', 'SELECT id, ssn FROM customers'],
  ['qualified', 'SELECT c.ssn FROM customers c'],
  ['schema-qualified', 'SELECT public.customers.ssn FROM public.customers'],
  ['alias', 'SELECT ssn AS tax_id FROM customers'],
  ['column alias list', 'SELECT x FROM customers AS c(a, b, d, e, x)'],
  ['expression', "SELECT 'n:' || ssn FROM customers"],
  ['cast', 'SELECT ssn::varchar FROM customers'],
  ['function', 'SELECT upper(ssn), length(ssn) FROM customers'],
  ['substring', 'SELECT substr(ssn, 1, 1) FROM customers'],
  ['comparison as a value', "SELECT ssn = '111-11-1111' AS same FROM customers"],
  ['CASE', "SELECT CASE WHEN ssn LIKE '1%' THEN 'one' ELSE 'other' END FROM customers"],
  ['coalesce', "SELECT coalesce(ssn, 'none') FROM customers"],
  ['ROW()', 'SELECT ROW(id, ssn) FROM customers'],
  ['whole row', 'SELECT c FROM customers c'],
  ['whole row by table name', 'SELECT customers FROM customers'],
  ['to_json of the whole row', 'SELECT to_json(c) FROM customers c'],
  ['row_to_json of t.*', 'SELECT row_to_json(c.*) FROM customers c'],
  ['json_build_object', "SELECT json_build_object('s', ssn) FROM customers"],
  ['jsonb_agg', 'SELECT jsonb_agg(c) FROM customers c'],
  ['array constructor', 'SELECT ARRAY[ssn] FROM customers'],
  ['array_agg', 'SELECT array_agg(ssn) FROM customers'],
  ['max', 'SELECT max(ssn) FROM customers'],
  ['count of the column', 'SELECT count(ssn) FROM customers'],
  ['count DISTINCT', 'SELECT count(DISTINCT ssn) FROM customers'],
  ['string_agg', "SELECT string_agg(ssn, ',') FROM customers"],
  ['WITHIN GROUP', 'SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ssn) FROM customers'],
  ['mode', 'SELECT mode() WITHIN GROUP (ORDER BY ssn) FROM customers'],
  ['window argument', 'SELECT lag(ssn) OVER (ORDER BY id) FROM customers'],
  ['grouped and output', 'SELECT ssn, count(*) FROM customers GROUP BY ssn'],
  ['scalar subquery', 'SELECT (SELECT ssn FROM customers WHERE id = 1)'],
  [
    'correlated scalar subquery',
    'SELECT id, (SELECT c.ssn FROM orders o WHERE o.customer_id = c.id LIMIT 1) FROM customers c',
  ],
  [
    'correlated filter of an output sublink',
    "SELECT id, EXISTS (SELECT 1 WHERE c.ssn LIKE '1%') FROM customers c",
  ],
  ['ARRAY subquery', 'SELECT ARRAY(SELECT ssn FROM customers)'],
  ['IN list as a value', "SELECT ssn IN ('111-11-1111') FROM customers"],
  ['derived table that renames it', 'SELECT tax FROM (SELECT ssn AS tax FROM customers) s'],
  ['derived table by position', 'SELECT s.b FROM (SELECT id, ssn FROM customers) s(a, b)'],
  ['derived table whole row', 'SELECT s FROM (SELECT ssn FROM customers) s'],
  ['CTE', 'WITH c AS (SELECT ssn AS x FROM customers) SELECT x FROM c'],
  ['CTE column list', 'WITH c(x) AS (SELECT ssn FROM customers) SELECT x FROM c'],
  [
    'nested CTEs',
    'WITH a AS (SELECT ssn FROM customers), b AS (SELECT ssn AS y FROM a) SELECT y FROM b',
  ],
  [
    'recursive CTE',
    'WITH RECURSIVE r(n, s) AS (SELECT 1, NULL::text UNION ALL SELECT n + 1, (SELECT ssn FROM customers WHERE id = n) FROM r WHERE n < 3) SELECT s FROM r',
  ],
  [
    'recursive CTE CYCLE path',
    'WITH RECURSIVE r AS (SELECT id, ssn FROM customers UNION ALL SELECT id, ssn FROM r) CYCLE ssn SET loop USING path SELECT id, path FROM r',
  ],
  ['UNION branch', 'SELECT name FROM customers UNION ALL SELECT ssn FROM customers'],
  ['UNION second branch only', 'SELECT id::text FROM customers UNION SELECT ssn FROM customers'],
  ['INTERSECT', 'SELECT ssn FROM customers INTERSECT SELECT ssn FROM customers'],
  ['LATERAL subquery', 'SELECT l.x FROM customers c, LATERAL (SELECT c.ssn AS x) l'],
  ['LATERAL function', 'SELECT x FROM customers c, unnest(ARRAY[c.ssn]) AS x'],
  [
    'set-returning function output',
    'SELECT g FROM customers c, generate_series(1, length(c.ssn)) g',
  ],
  [
    'function of a sublink in FROM',
    'SELECT * FROM unnest((SELECT array_agg(ssn) FROM customers)) u',
  ],
  [
    'correlated CTE in a sublink',
    'SELECT (WITH x AS (SELECT c.ssn AS v) SELECT v FROM x) FROM customers c',
  ],
  ['unnamed derived column', "SELECT s.x FROM (SELECT ssn || '' FROM customers) s(x)"],
  ['whole row of a derived table', 'SELECT json_agg(s) FROM (SELECT id, ssn FROM customers) s'],
  ['IS NULL as a value', 'SELECT ssn IS NULL FROM customers'],
  ['pg_typeof', 'SELECT pg_typeof(ssn) FROM customers'],
  ['catalog relation beside it', 'SELECT ssn FROM pg_catalog.pg_class, customers c'],
  [
    'set-returning function in FROM',
    "SELECT * FROM customers c, regexp_split_to_table(c.ssn, '-') p",
  ],
  ['VALUES in LATERAL', 'SELECT v.x FROM customers c, LATERAL (VALUES (c.ssn)) v(x)'],
  ['USING merged column', 'SELECT ssn FROM customers a JOIN customers b USING (ssn)'],
  ['NATURAL join', 'SELECT ssn FROM customers NATURAL JOIN customers'],
  ['join alias', 'SELECT j.ssn FROM (customers a JOIN orders o ON o.customer_id = a.id) AS j'],
  [
    'star over an aliased join',
    'SELECT * FROM (customers a JOIN orders o ON o.customer_id = a.id) j',
  ],
  ['composite field of a row', 'SELECT (r).f2 FROM (SELECT ROW(id, ssn) AS r FROM customers) s'],
  ['subscripted array', 'SELECT (ARRAY[ssn])[1] FROM customers'],
  ['format', "SELECT format('%s', ssn) FROM customers"],
  ['xmlelement', 'SELECT xmlelement(name x, ssn) FROM customers'],
  ['GROUPING', 'SELECT GROUPING(ssn) FROM customers GROUP BY ssn'],
  ['through a cursor', 'DECLARE k CURSOR FOR SELECT ssn FROM customers'],
]

/** Runs the rewritten SQL and returns the upstream error as the client would get it. */
async function clientError(db: TestDatabase, session: CompiledSession, sql: string) {
  const [statement] = rewrite(sql, session).statements
  try {
    await db.query(statement?.sql ?? '')
  } catch (error) {
    return scrubUpstreamError(error as UpstreamErrorFields, { session, originalSql: sql })
  }
  throw new Error(`expected an upstream error for ${sql}`)
}

/** Filters that make PostgreSQL quote the constrained column's value in its error. */
const valueProbes = [
  ['integer cast', 'SELECT id FROM customers WHERE ssn::int = 1'],
  ['smallint of digits', "SELECT id FROM customers WHERE replace(ssn, '-', '')::smallint = 1"],
  ['date', 'SELECT id FROM customers WHERE ssn::date IS NULL'],
  ['json', "SELECT id FROM customers WHERE ('x' || ssn)::json IS NULL"],
  ['numeric', 'SELECT id FROM customers ORDER BY ssn::numeric'],
  ['chr of the digits', "SELECT id FROM customers WHERE chr(replace(ssn, '-', '')::int) = 'x'"],
  ['interval', "SELECT count(*) FROM customers WHERE (ssn || ' days')::interval IS NULL"],
  ['boolean in FILTER', 'SELECT count(*) FILTER (WHERE ssn::boolean) FROM customers'],
] as const

describeOnDatabases('projection policies', (db) => {
  it.each(allowed)('%s is allowed and returns the right rows', async (_name, sql, expected) => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    expect(await run(db(), session, sql)).toEqual(expected)
  })

  it.each(refused)('refuses output through %s (42501, no policy name)', async (_name, sql) => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    let error: { code?: string; message: string } | undefined
    try {
      rewrite(sql, session)
    } catch (e) {
      error = e as { code?: string; message: string }
    }
    expect(error?.code, sql).toBe('42501')
    expect(error?.message, sql).toMatch(REFUSED)
    expect(error?.message).not.toContain(projectSsn.name)
  })

  it('SELECT * leaves the column out, as a denied column is', async () => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    const sql = 'SELECT * FROM customers ORDER BY id LIMIT 1'
    const columns = await db().columns(rewrite(sql, session).statements[0]?.sql ?? '')
    expect(columns).toEqual(['id', 'tenant_id', 'name', 'email', 'region'])
    expect(await run(db(), session, sql)).toEqual([
      { id: 1, tenant_id: 1, name: 'Alice', email: 'alice@acme.test', region: 'north' },
    ])
  })

  it('t.*, a star over a join and a star over a derived table leave it out too', async () => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    const cases: [string, string[]][] = [
      ['SELECT c.* FROM customers c', ['id', 'tenant_id', 'name', 'email', 'region']],
      [
        'SELECT * FROM customers c JOIN orders o ON o.customer_id = c.id',
        [
          ...['id', 'tenant_id', 'name', 'email', 'region'],
          ...['id', 'tenant_id', 'customer_id', 'amount', 'status', 'note', 'created_at'],
        ],
      ],
      ['SELECT * FROM (SELECT id, ssn AS tax FROM customers) s', ['id']],
      [
        'WITH c AS (SELECT * FROM customers) SELECT * FROM c',
        ['id', 'tenant_id', 'name', 'email', 'region'],
      ],
      ['SELECT x.* FROM customers AS x(a, b)', ['a', 'b', 'name', 'email', 'region']],
      ['TABLE customers', ['id', 'tenant_id', 'name', 'email', 'region']],
      [
        'WITH "Big Set" AS (SELECT * FROM customers) SELECT * FROM "Big Set"',
        ['id', 'tenant_id', 'name', 'email', 'region'],
      ],
      [
        'SELECT tableoid::regclass::text AS t, * FROM customers',
        ['t', 'id', 'tenant_id', 'name', 'email', 'region'],
      ],
      [
        'SELECT * FROM customers UNION ALL SELECT * FROM customers',
        ['id', 'tenant_id', 'name', 'email', 'region'],
      ],
      [
        'SELECT * FROM customers c, LATERAL (SELECT c.ssn, 1 AS one) l',
        ['id', 'tenant_id', 'name', 'email', 'region', 'one'],
      ],
      [
        'SELECT * FROM (VALUES (1)) v(ssn), customers c WHERE false',
        ['ssn', 'id', 'tenant_id', 'name', 'email', 'region'],
      ],
    ]
    for (const [sql, expected] of cases) {
      const [statement] = rewrite(sql, session).statements
      expect(await db().columns(statement?.sql ?? ''), sql).toEqual(expected)
    }
  })

  it('a star over a USING or NATURAL join puts the merged columns first, as PostgreSQL does', async () => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    const plain = await makeSession(db().catalog, { policies: [] })
    for (const sql of [
      'SELECT * FROM customers a JOIN customers b USING (id) ORDER BY 1',
      'SELECT * FROM customers a LEFT JOIN orders b USING (id, tenant_id) ORDER BY 1',
      'SELECT * FROM orders b RIGHT JOIN customers a USING (id) ORDER BY 1',
      'SELECT * FROM customers a FULL JOIN orders b USING (id) ORDER BY 1',
      'SELECT * FROM customers a JOIN customers b USING (ssn) ORDER BY 1',
      'SELECT * FROM customers a JOIN orders b USING (id) AS j ORDER BY 1',
      'SELECT * FROM customers NATURAL JOIN orders ORDER BY 1',
      'SELECT b.*, a.* FROM customers a JOIN orders b USING (id) ORDER BY 1',
      'SELECT * FROM customers a JOIN orders b USING (id) JOIN payments p USING (id) ORDER BY 1',
      'SELECT * FROM customers a JOIN orders b ON b.customer_id = a.id FULL JOIN refunds r USING (amount) ORDER BY 1',
      'SELECT * FROM payments p RIGHT JOIN (customers a NATURAL JOIN orders b) USING (id) ORDER BY 1',
    ]) {
      const [statement] = rewrite(sql, session).statements
      const [reference] = rewrite(sql, plain).statements
      const expected = (await db().columns(reference?.sql ?? '')).filter((c) => c !== 'ssn')
      expect(await db().columns(statement?.sql ?? ''), sql).toEqual(expected)
      const rows = (await db().query(statement?.sql ?? '')).rows
      expect(rows.length, sql).toBe((await db().query(reference?.sql ?? '')).rows.length)
      expect(JSON.stringify(rows), sql).not.toMatch(/\d{3}-\d{2}-\d{4}/)
    }
  })

  it('writes the star out the same way for a cursor, EXPLAIN and statements served by a template', async () => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    for (const id of [1, 2, 3]) {
      const rows = await run(db(), session, `SELECT * FROM customers WHERE id = ${id}`)
      expect(Object.keys(rows[0] ?? {}), String(id)).toEqual([
        'id',
        'tenant_id',
        'name',
        'email',
        'region',
      ])
    }
    const [cursor] = rewrite('DECLARE k CURSOR FOR SELECT * FROM customers', session).statements
    expect(cursor?.sql).not.toMatch(/c(ustomers)?\.\*|SELECT \* FROM \(/)
    const [explain] = rewrite('EXPLAIN SELECT * FROM customers', session).statements
    expect(explain?.sql).toMatch(/customers\.region/)
    expect((await runError(db(), session, 'EXPLAIN SELECT ssn FROM customers')).code).toBe('42501')
  })

  it('SELECT * of a table whose visible columns are all constrained is refused (42501)', async () => {
    const only = policy('projection', {
      target: { ...customers, columns: ['id', 'tenant_id', 'name', 'email', 'ssn', 'region'] },
    })
    const session = await makeSession(db().catalog, { policies: [only] })
    const error = await runError(db(), session, 'SELECT * FROM customers')
    expect(error.code).toBe('42501')
    expect(error.message).toMatch(/projection-constrained/)
    expect(await run(db(), session, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 4 }])
  })

  it('a user without the policy sees the column as before', async () => {
    const session = await makeSession(db().catalog, { policies: [] })
    expect(await run(db(), session, 'SELECT ssn FROM customers WHERE id = 1')).toEqual([
      { ssn: '111-11-1111' },
    ])
    const [statement] = rewrite('SELECT * FROM customers', session).statements
    expect(await db().columns(statement?.sql ?? '')).toContain('ssn')
  })

  it.each(valueProbes)(
    'an upstream error of a %s filter does not quote the value',
    async (_name, sql) => {
      const session = await makeSession(db().catalog, { policies: [projectSsn] })
      const scrubbed = await clientError(db(), session, sql)
      const text = JSON.stringify(scrubbed)
      for (const value of ['111', '222', '333', '11-1111', '111111111']) {
        expect(text, sql).not.toContain(value)
      }
      // Redacted, or a message that names the failure without a value (json: the token is in DETAIL).
      if (scrubbed.message !== REDACTED_UPSTREAM_MESSAGE)
        expect(scrubbed.message).not.toMatch(/["\d]/)
      expect(scrubbed.detail).toBeUndefined()
      expect(scrubbed.code).not.toBe('XX000')
      // Without the policy the same error shows the value: the probe itself works.
      const plain = await makeSession(db().catalog, { policies: [] })
      expect(JSON.stringify(await clientError(db(), plain, sql))).toMatch(/1{3}|2{3}|3{3}/)
    },
  )

  it('keeps errors that quote nothing but what the user wrote, or no value at all', async () => {
    const session = await makeSession(db().catalog, { policies: [projectSsn] })
    expect((await clientError(db(), session, "SELECT 'abc'::int FROM customers")).message).toBe(
      'invalid input syntax for type integer: "abc"',
    )
    expect((await clientError(db(), session, 'SELECT nme FROM customers')).message).toBe(
      'column "nme" does not exist',
    )
    const zero = 'SELECT id FROM customers WHERE 1 / (length(ssn) - 11) = 1'
    expect((await clientError(db(), session, zero)).message).toBe('division by zero')
  })
})
