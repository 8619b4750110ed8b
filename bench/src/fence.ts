/**
 * bench/fence: what the security-barrier fence costs on PostgreSQL. Runs a point query, a range
 * query and a join on filtered tables, rewritten by Palisade (fenced, leakproof conjuncts copied
 * inside), against the same rewrite with the fence removed, and prints the ratio. Needs
 * PALISADE_TEST_PG_URL (or BENCH_PG_URL); skipped otherwise.
 */
import { compileSession, loadCore, rewrite, type SessionInput } from '@palisade/core'
import pg from 'pg'
import { fmt, summarize } from './stats.js'

const ROWS = Number(process.env['BENCH_FENCE_ROWS'] ?? 200_000)
const ITERATIONS = Number(process.env['BENCH_FENCE_ITERATIONS'] ?? 300)

const input: SessionInput = {
  user: { id: 'u-1', username: 'alice', roles: [], attributes: { tenant: 3 } },
  datasource: { name: 'bench', accessMode: 'open' },
  catalog: {
    schemas: [
      {
        name: 'public',
        tables: [
          {
            name: 'fence_orders',
            columns: ['id', 'tenant_id', 'customer_id', 'amount', 'note'].map((name) => ({
              name,
              type: 'integer',
            })),
          },
          {
            name: 'fence_customers',
            columns: ['id', 'tenant_id', 'name'].map((name) => ({ name, type: 'integer' })),
          },
        ],
      },
    ],
  },
  attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
  policies: [
    {
      id: 'p1',
      name: 'tenant',
      version: 1,
      type: 'row_filter',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['fence_orders', 'fence_customers'] }],
      filterExpression: 'tenant_id = {user.tenant}',
    },
  ],
}

const queries: [string, string, (i: number) => unknown[]][] = [
  [
    'point (id = $1)',
    'SELECT id, amount FROM fence_orders WHERE id = $1',
    (i) => [(i * 7919) % ROWS],
  ],
  [
    'range (id BETWEEN)',
    'SELECT count(*) FROM fence_orders WHERE id BETWEEN $1 AND $1 + 500',
    (i) => [(i * 7919) % ROWS],
  ],
  [
    'join on filtered tables',
    'SELECT c.name, o.amount FROM fence_customers c JOIN fence_orders o ON o.customer_id = c.id WHERE c.id = $1',
    (i) => [(i * 31) % (ROWS / 10)],
  ],
]

/** Times both variants alternately, so load on the machine affects them alike; medians in ms. */
async function timePair(
  client: pg.Client,
  a: string,
  b: string,
  params: (i: number) => unknown[],
): Promise<[number, number]> {
  for (let i = 0; i < 20; i++) {
    await client.query(a, params(i))
    await client.query(b, params(i))
  }
  const samplesA: number[] = []
  const samplesB: number[] = []
  for (let i = 0; i < ITERATIONS; i++) {
    for (const [sql, samples] of [
      [a, samplesA],
      [b, samplesB],
    ] as const) {
      const start = process.hrtime.bigint()
      await client.query(sql, params(i))
      samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  }
  return [summarize(samplesA).median, summarize(samplesB).median]
}

export async function run(): Promise<void> {
  const url = process.env['BENCH_PG_URL'] ?? process.env['PALISADE_TEST_PG_URL']
  if (!url) {
    console.log(
      'skipped: set PALISADE_TEST_PG_URL (or BENCH_PG_URL) to measure the fence on PostgreSQL',
    )
    return
  }
  await loadCore()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`
      DROP TABLE IF EXISTS fence_orders, fence_customers;
      CREATE TABLE fence_customers (id int PRIMARY KEY, tenant_id int NOT NULL, name int);
      CREATE TABLE fence_orders (id int PRIMARY KEY, tenant_id int NOT NULL, customer_id int, amount int, note int);
      INSERT INTO fence_customers SELECT g, g % 10, g FROM generate_series(0, ${ROWS / 10 - 1}) g;
      INSERT INTO fence_orders SELECT g, g % 10, g % ${ROWS / 10}, g % 1000, g FROM generate_series(0, ${ROWS - 1}) g;
      CREATE INDEX ON fence_orders (customer_id);
      ANALYZE fence_orders; ANALYZE fence_customers;`)
    const session = await compileSession(input)
    console.log(`${ROWS} rows, ${ITERATIONS} runs each, median ms`)
    console.log('| query | unfenced ms | fenced ms | ratio |')
    console.log('|---|---|---|---|')
    for (const [name, sql, params] of queries) {
      const fenced = rewrite(sql, session).statements[0]?.sql ?? ''
      // The baseline is the same rewrite without the fence: only a benchmark may build it.
      const unfenced = fenced.replaceAll(' OFFSET 0', '')
      const [base, withFence] = await timePair(client, unfenced, fenced, params)
      console.log(
        `| ${name} | ${fmt(base, 3)} | ${fmt(withFence, 3)} | ${fmt(withFence / base, 2)}× |`,
      )
    }
  } finally {
    await client.query('DROP TABLE IF EXISTS fence_orders, fence_customers')
    await client.end()
  }
}
