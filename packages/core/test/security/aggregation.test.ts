import { beforeAll, expect, it } from 'vitest'
import type { Catalog, CatalogTable } from '../../src/catalog.types.js'
import { loadCore } from '../../src/load-core.js'
import type { EffectivePolicy } from '../../src/policy/policy.types.js'
import { rewrite } from '../../src/rewrite.js'
import { describeOnDatabases, type TestDatabase } from '../fixtures/databases.js'
import { decisionBinding, makeSession, policy, run, runError } from '../fixtures/session.js'

/**
 * Aggregation policies (docs/policies.md, "Aggregation: exact rules"): the table is read only
 * through aggregates, every answered group draws on at least N of its rows, smaller groups are
 * folded into one remainder group with NULL keys, and shapes that could single a row out are
 * refused. Sizes: eng 5, ops 4, hr 1, legal 1, pr 1 (remainder 3), plus a partitioned table.
 */
const STAFF_SQL = `
CREATE SCHEMA agg;
CREATE TABLE agg.staff (id integer PRIMARY KEY, dept text, region text, salary integer NOT NULL, name text NOT NULL);
INSERT INTO agg.staff VALUES
  (1, 'eng', 'north', 100, 'Ada'), (2, 'eng', 'north', 110, 'Bo'), (3, 'eng', 'south', 120, 'Cy'),
  (4, 'eng', 'south', 130, 'Di'), (5, 'eng', NULL, 140, 'Ed'),
  (6, 'ops', 'north', 200, 'Fay'), (7, 'ops', 'north', 210, 'Gus'), (8, 'ops', 'south', 220, 'Hal'),
  (9, 'ops', 'south', 230, 'Ivy'),
  (10, 'hr', 'north', 300, 'Jo'), (11, 'legal', 'south', 400, 'Kim'), (12, 'pr', NULL, 500, 'Lu');
CREATE TABLE agg.visits (id integer PRIMARY KEY, staff_id integer NOT NULL, site text NOT NULL);
INSERT INTO agg.visits SELECT g, 10, 'hq' FROM generate_series(1, 6) g;
INSERT INTO agg.visits VALUES (7, 1, 'hq'), (8, 6, 'lab');
CREATE TABLE agg.sales (id integer NOT NULL, day date NOT NULL, amount integer NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE agg.sales_jan PARTITION OF agg.sales FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE agg.sales_feb PARTITION OF agg.sales FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
-- The same ctid in both partitions: row identity must tell them apart.
INSERT INTO agg.sales VALUES (1, '2026-01-05', 10), (2, '2026-02-05', 20);
CREATE TABLE agg.people (id integer PRIMARY KEY, dept text, region text, salary integer NOT NULL, name text NOT NULL);
INSERT INTO agg.people SELECT g, 'd' || (g * g % 11), CASE g % 4 WHEN 0 THEN NULL ELSE 'r' || (g % 3) END,
  (g * 37) % 100, 'p' || g FROM generate_series(1, 80) g;
`

const column = (name: string, type: string) => ({ name, type, nullable: true })
const PERSON_COLUMNS = [
  column('id', 'integer'),
  column('dept', 'text'),
  column('region', 'text'),
  column('salary', 'integer'),
  column('name', 'text'),
]
const STAFF_TABLES: CatalogTable[] = [
  {
    name: 'staff',
    kind: 'TABLE',
    primaryKey: ['id'],
    columns: PERSON_COLUMNS,
  },
  {
    name: 'visits',
    kind: 'TABLE',
    primaryKey: ['id'],
    columns: [column('id', 'integer'), column('staff_id', 'integer'), column('site', 'text')],
  },
  {
    name: 'people',
    kind: 'TABLE',
    primaryKey: ['id'],
    columns: PERSON_COLUMNS,
  },
  {
    name: 'sales',
    kind: 'TABLE',
    columns: [column('id', 'integer'), column('day', 'date'), column('amount', 'integer')],
    descendants: [
      { schema: 'agg', table: 'sales_jan', ancestors: [{ schema: 'agg', table: 'sales' }] },
      { schema: 'agg', table: 'sales_feb', ancestors: [{ schema: 'agg', table: 'sales' }] },
    ],
  },
]

function withStaff(catalog: Catalog): Catalog {
  return { schemas: [...catalog.schemas, { name: 'agg', alias: null, tables: STAFF_TABLES }] }
}

const aggregation = (
  tables: string[],
  minGroupSize: number,
  extra: Partial<EffectivePolicy> = {},
): EffectivePolicy =>
  policy('aggregation', { target: { schemas: ['agg'], tables }, minGroupSize, ...extra })

/** Rows as sorted JSON lines, for comparing multisets. */
function canonical(rows: Record<string, unknown>[]): string[] {
  return rows
    .map((r) => JSON.stringify(Object.values(r).map((v) => (v === null ? null : String(v)))))
    .sort()
}

describeOnDatabases('aggregation policy', (database) => {
  let db: TestDatabase
  let catalog: Catalog
  beforeAll(async () => {
    await loadCore()
    db = database()
    for (const statement of STAFF_SQL.split(';\n').filter((t) => t.trim() !== ''))
      await db.query(statement)
    catalog = withStaff(db.catalog)
  })
  const session = (...policies: EffectivePolicy[]) => makeSession(catalog, { policies })

  it('answers groups of at least N rows and folds the smaller ones into a NULL-keyed remainder', async () => {
    const s = await session(aggregation(['staff'], 3))
    const rows = await run(
      db,
      s,
      'SELECT dept, count(*) AS n, sum(salary) AS total FROM agg.staff GROUP BY dept ORDER BY n DESC',
    )
    expect(rows.map((r) => [r['dept'], Number(r['n']), Number(r['total'])])).toEqual([
      ['eng', 5, 600],
      ['ops', 4, 860],
      [null, 3, 1200],
    ])
  })

  it('drops the remainder when it is itself too small', async () => {
    const s = await session(aggregation(['staff'], 4))
    const rows = await run(db, s, 'SELECT dept, count(*) AS n FROM agg.staff GROUP BY 1')
    expect(canonical(rows)).toEqual(
      canonical([
        { dept: 'eng', n: 5 },
        { dept: 'ops', n: 4 },
      ]),
    )
  })

  it('answers the single group only when it is large enough', async () => {
    const s = await session(aggregation(['staff'], 3))
    expect(
      await run(db, s, 'SELECT avg(salary)::int AS a FROM agg.staff WHERE dept = $1', ['hr']),
    ).toEqual([])
    expect(await run(db, s, "SELECT count(*)::int AS n FROM agg.staff WHERE dept = 'eng'")).toEqual(
      [{ n: 5 }],
    )
  })

  it('counts rows of the table, not rows a join repeats', async () => {
    // Jo (hr) visited six times: six joined rows, one staff row. Ada (eng) and Fay (ops) once.
    const sql =
      'SELECT s.dept, count(*)::int AS n FROM agg.staff s JOIN agg.visits v ON v.staff_id = s.id GROUP BY s.dept'
    expect(await run(db, await session(aggregation(['staff'], 4)), sql)).toEqual([])
    // Three staff rows in all: enough for one remainder group, whatever the join repeated.
    expect(await run(db, await session(aggregation(['staff'], 3)), sql)).toEqual([
      { dept: null, n: 8 },
    ])
  })

  it('tells the rows of different partitions apart', async () => {
    const s = await session(aggregation(['sales'], 2))
    expect(await run(db, s, 'SELECT sum(amount)::int AS total FROM agg.sales')).toEqual([
      { total: 30 },
    ])
  })

  it('refuses every statement that would return rows unaggregated, naming the policy type only', async () => {
    const p = aggregation(['staff'], 3)
    const s = await session(p)
    for (const sql of [
      'SELECT * FROM agg.staff',
      'SELECT name FROM agg.staff WHERE id = 1',
      'SELECT DISTINCT dept FROM agg.staff',
      'SELECT salary FROM agg.staff LIMIT 1',
      'SELECT count(*) OVER () FROM agg.staff',
      'SELECT sum(salary) OVER (PARTITION BY dept) FROM agg.staff',
      'SELECT unnest(ARRAY[salary]) FROM agg.staff',
      'SELECT v.site FROM agg.visits v WHERE EXISTS (SELECT 1 FROM agg.staff s WHERE s.id = v.staff_id)',
      'SELECT count(*) FROM (SELECT * FROM agg.staff) x',
      'WITH x AS (SELECT salary FROM agg.staff) SELECT sum(salary) FROM x',
    ]) {
      const error = await runError(db, s, sql)
      expect(error.code, sql).toBe('42501')
      expect(error.message, sql).toMatch(/aggregation policy/)
      expect(error.message, sql).not.toContain(p.name)
    }
  })

  it("answers the probes clients send for a result's columns, with no row", async () => {
    const s = await session(aggregation(['staff'], 3))
    for (const sql of [
      'SELECT * FROM agg.staff LIMIT 0',
      'SELECT * FROM agg.staff WHERE 1 = 0',
      'SELECT name, salary FROM agg.staff WHERE false',
    ]) {
      expect(await run(db, s, sql), sql).toEqual([])
    }
    expect(
      await db.columns(rewrite('SELECT * FROM agg.staff LIMIT 0', s).statements[0]?.sql ?? ''),
    ).toEqual(['id', 'dept', 'region', 'salary', 'name'])
    for (const sql of ['SELECT * FROM agg.staff LIMIT 1', 'SELECT * FROM agg.staff WHERE 1 = 1'])
      expect((await runError(db, s, sql)).code, sql).toBe('42501')
  })

  it('refuses aggregates and shapes that single one row out', async () => {
    const s = await session(aggregation(['staff'], 3))
    for (const sql of [
      'SELECT max(salary) FROM agg.staff',
      'SELECT min(salary) FROM agg.staff WHERE id IN (1, 2, 3)',
      'SELECT array_agg(name) FROM agg.staff',
      "SELECT string_agg(name, ',') FROM agg.staff GROUP BY dept",
      'SELECT json_agg(s) FROM agg.staff s',
      'SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY salary) FROM agg.staff',
      'SELECT mode() WITHIN GROUP (ORDER BY salary) FROM agg.staff',
      'SELECT sum(salary) - sum(salary) FILTER (WHERE id <> 1) FROM agg.staff',
      'SELECT sum(salary) - sum(CASE WHEN id <> 1 THEN salary ELSE 0 END) FROM agg.staff',
      'SELECT (SELECT sum(salary) FROM agg.staff) - (SELECT sum(salary) FROM agg.staff WHERE id <> 1)',
      'SELECT dept, count(*) FROM agg.staff GROUP BY ROLLUP (dept)',
    ]) {
      const error = await runError(db, s, sql)
      expect(error.code, sql).toBe('42501')
      expect(error.message, sql).toMatch(/aggregation policy/)
    }
  })

  it('folds groups per primary key and HAVING count(*) = 1 into nothing', async () => {
    const s = await session(aggregation(['staff'], 3))
    const perKey = await run(db, s, 'SELECT id, count(*)::int AS n FROM agg.staff GROUP BY id')
    expect(perKey).toEqual([{ id: null, n: 12 }])
    const single = await run(
      db,
      s,
      'SELECT dept, count(*) FROM agg.staff GROUP BY dept HAVING count(*) = 1',
    )
    expect(single).toEqual([])
  })

  it('allows a value-revealing aggregate the policy lists', async () => {
    const s = await session(aggregation(['staff'], 3, { allowedAggregates: ['max'] }))
    expect(await run(db, s, "SELECT max(salary) AS m FROM agg.staff WHERE dept = 'eng'")).toEqual([
      { m: 140 },
    ])
  })

  it('leaves other users and other tables alone', async () => {
    const s = await session(aggregation(['staff'], 3))
    expect(await run(db, s, 'SELECT count(*)::int AS n FROM agg.visits')).toEqual([{ n: 8 }])
    const free = await session()
    expect(await run(db, free, 'SELECT name FROM agg.staff WHERE id = 1')).toEqual([
      { name: 'Ada' },
    ])
  })

  it('enforces the rule in subqueries, CTEs, LATERAL and set operation branches', async () => {
    const s = await session(aggregation(['staff'], 3))
    const correlated = await run(
      db,
      s,
      `SELECT d.dept, (SELECT count(*)::int FROM agg.staff s WHERE s.dept = d.dept) AS n
         FROM (VALUES ('eng'), ('hr')) AS d(dept) ORDER BY 1`,
    )
    expect(correlated).toEqual([
      { dept: 'eng', n: 5 },
      { dept: 'hr', n: null },
    ])
    const lateral = await run(
      db,
      s,
      `SELECT d.dept, x.n FROM (VALUES ('ops'), ('pr')) AS d(dept),
         LATERAL (SELECT count(*)::int AS n FROM agg.staff s WHERE s.dept = d.dept) x`,
    )
    expect(lateral).toEqual([{ dept: 'ops', n: 4 }])
    const cte = await run(
      db,
      s,
      `WITH per AS (SELECT dept, avg(salary)::int AS pay FROM agg.staff GROUP BY dept)
       SELECT dept, pay FROM per WHERE dept IS NOT NULL ORDER BY pay`,
    )
    expect(cte).toEqual([
      { dept: 'eng', pay: 120 },
      { dept: 'ops', pay: 215 },
    ])
    const union = await run(
      db,
      s,
      `SELECT 'all' AS dept, 0::bigint AS n UNION ALL
       SELECT dept, count(*) FROM agg.staff GROUP BY dept ORDER BY 2 DESC`,
    )
    expect(union.map((r) => r['dept'])).toEqual(['eng', 'ops', null, 'all'])
  })

  it('is switched per user by a decision function and reported in the applied policies', async () => {
    const gated = aggregation(['staff'], 3, {
      decision: decisionBinding(
        "function evaluate(ctx) { return { fire: ctx.session.user.roles.includes('analyst') } }",
      ),
    })
    const analyst = await makeSession(catalog, { policies: [gated], user: { roles: ['analyst'] } })
    const owner = await makeSession(catalog, { policies: [gated], user: { roles: ['owner'] } })
    expect((await runError(db, analyst, 'SELECT name FROM agg.staff')).code).toBe('42501')
    expect(await run(db, owner, 'SELECT name FROM agg.staff WHERE id = 2')).toEqual([
      { name: 'Bo' },
    ])
    const [statement] = rewrite('SELECT count(*) FROM agg.staff', analyst).statements
    expect(statement?.policiesApplied.map((p) => p.policy_id)).toEqual([gated.id])
  })

  it('targets the tables carrying a tag', async () => {
    const tagged: Catalog = {
      schemas: catalog.schemas.map((schema) => ({
        ...schema,
        tables: schema.tables.map((t) => (t.name === 'staff' ? { ...t, tags: ['hr.pay'] } : t)),
      })),
    }
    const byTag = policy('aggregation', {
      target: { schemas: ['*'], tables: ['*'], tags: ['hr.pay'] },
      minGroupSize: 3,
    })
    const s = await makeSession(tagged, { policies: [byTag] })
    expect((await runError(db, s, 'SELECT name FROM agg.staff')).code).toBe('42501')
    expect(await run(db, s, 'SELECT name FROM agg.people WHERE id = 1')).toEqual([{ name: 'p1' }])
  })

  it('in shadow mode is reported as what it would refuse, and not applied', async () => {
    const shadow = aggregation(['staff'], 3, { enforcement: 'shadow' })
    const s = await session(shadow)
    const [statement] = rewrite('SELECT name FROM agg.staff', s).statements
    expect(statement?.shadow?.wouldDeny).toBe(true)
    expect(statement?.shadow?.error).toMatch(/aggregation policy/)
    expect(await run(db, s, 'SELECT name FROM agg.staff WHERE id = 3')).toEqual([{ name: 'Cy' }])
  })

  it('answers random aggregate statements as a hand-written reference query does', async () => {
    const random = seeded(20261127)
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
    for (let i = 0; i < 60; i++) {
      const n = 2 + Math.floor(random() * 8)
      const keys = KEY_CHOICES.filter(() => random() < 0.45)
      const aggregates = AGGREGATE_CHOICES.filter(() => random() < 0.5)
      if (aggregates.length === 0) aggregates.push('count(*)')
      const where = pick(WHERE_CHOICES)
      const s = await session(aggregation(['people'], n))
      const select = [
        ...keys.map((k, j) => `${k} AS k${j}`),
        ...aggregates.map((a, j) => `${a} AS a${j}`),
      ]
      const groupBy = keys.length === 0 ? '' : ` GROUP BY ${keys.map((_, j) => j + 1).join(', ')}`
      const sql = `SELECT ${select.join(', ')} FROM agg.people${where}${groupBy}`
      const through = await run(db, s, sql)
      const reference = (await db.query(referenceQuery(keys, aggregates, where, n))).rows
      expect(canonical(through), `${sql} with N = ${n}`).toEqual(canonical(reference))
    }
  })
})

const KEY_CHOICES = ['dept', 'region', 'salary / 25', "coalesce(region, 'none') || dept"]
const AGGREGATE_CHOICES = [
  'count(*)',
  'sum(salary)',
  'avg(salary)',
  'count(DISTINCT region)',
  'count(region)',
  'stddev_pop(salary)',
  'sum(salary * 2 + 1)',
]
const WHERE_CHOICES = [
  '',
  ' WHERE salary > 30',
  " WHERE region = 'r1'",
  " WHERE dept <> 'd4'",
  ' WHERE id % 2 = 0',
]

/**
 * The rule written out by hand over the raw table: groups of at least `n` rows as they are,
 * the rows of all smaller groups as one group with NULL keys when they are `n` or more.
 */
function referenceQuery(keys: string[], aggregates: string[], where: string, n: number): string {
  const outputs = aggregates.map((a, j) => `${a} AS a${j}`)
  if (keys.length === 0)
    return `SELECT ${outputs.join(', ')} FROM agg.people${where} HAVING count(*) >= ${n}`
  const named = keys.map((k, j) => `${k} AS k${j}`)
  const names = keys.map((_, j) => `k${j}`)
  const same = names.map((k) => `s.${k} IS NOT DISTINCT FROM r.${k}`).join(' AND ')
  return `WITH r0 AS (SELECT *, ${named.join(', ')} FROM agg.people${where}),
    sizes AS (SELECT ${names.join(', ')}, count(*) AS size FROM r0 GROUP BY ${names.join(', ')}),
    marked AS (SELECT r.*, (SELECT s.size FROM sizes s WHERE ${same}) >= ${n} AS large FROM r0 r)
    SELECT ${names.join(', ')}, ${outputs.join(', ')} FROM marked WHERE large GROUP BY ${names.join(', ')}
    UNION ALL
    SELECT ${names.map((k) => `NULL AS ${k}`).join(', ')}, ${outputs.join(', ')} FROM marked WHERE NOT large
    HAVING count(*) >= ${n}`
}

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
