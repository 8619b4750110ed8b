/**
 * bench/rewrite: µs per rewrite (median, p95) for typical query shapes, cache miss and hit,
 * beside the bare parse + deparse of the same SQL: the floor of a parse-and-deparse design.
 */
import { compileSession, loadCore, rewrite, type SessionInput } from '@palisade/core'
import { deparseSync, parseSync } from 'pgsql-parser'
import { fmt, summarize, timeMicros } from './stats.js'

const columns = (names: string) => names.split(' ').map((name) => ({ name, type: 'text' }))

export const input: SessionInput = {
  user: { id: 'u-1', username: 'alice', roles: ['analyst'], attributes: { tenant: 7 } },
  datasource: { name: 'shop', accessMode: 'open' },
  catalog: {
    schemas: [
      {
        name: 'public',
        tables: [
          {
            name: 'orders',
            columns: columns('id tenant_id customer_id amount status email created_at'),
          },
          { name: 'customers', columns: columns('id tenant_id name email ssn region') },
          { name: 'products', columns: columns('id name price') },
          { name: 'order_items', columns: columns('id order_id product_id qty tenant_id') },
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
      targets: [{ schemas: ['public'], tables: ['orders', 'customers', 'order_items'] }],
      filterExpression: 'tenant_id = {user.tenant}',
    },
    {
      id: 'p2',
      name: 'mask email',
      version: 1,
      type: 'column_mask',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['*'], columns: ['email'] }],
      maskExpression: "'***' || right(email, 4)",
    },
    {
      id: 'p3',
      name: 'deny ssn',
      version: 1,
      type: 'column_deny',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['customers'], columns: ['ssn'] }],
    },
  ],
}

export const shapes: [string, string][] = [
  ['point select', 'SELECT id, amount FROM orders WHERE id = 42'],
  ['select *', 'SELECT * FROM customers WHERE region = $1'],
  [
    'aggregate',
    'SELECT status, count(*), sum(amount) FROM orders GROUP BY status HAVING count(*) > 1',
  ],
  [
    '3-table join',
    'SELECT c.name, o.amount, i.qty FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items i ON i.order_id = o.id WHERE o.amount > 100',
  ],
  [
    'CTE',
    'WITH big AS (SELECT * FROM orders WHERE amount > 100) SELECT customer_id, count(*) FROM big GROUP BY 1',
  ],
  [
    'window',
    'SELECT id, amount, rank() OVER (PARTITION BY customer_id ORDER BY amount DESC) FROM orders',
  ],
  [
    'subquery',
    'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE amount > 10)',
  ],
  ['union', 'SELECT email FROM customers UNION SELECT email FROM orders'],
  [
    'information_schema',
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
  ],
  ['no tables', 'SELECT 1, now(), current_user'],
]

export async function run(): Promise<void> {
  await loadCore()
  console.log(
    '| shape | parse+deparse µs | miss µs (median / p95) | miss ratio | hit µs (median / p95) |',
  )
  console.log('|---|---|---|---|---|')
  for (const [name, sql] of shapes) {
    // A miss: a fresh session per call (empty rewrite cache) and SQL the parse cache has not
    // seen. Floor and miss are timed alternately on the same texts, so machine load and GC
    // affect both alike.
    const sessions = await Promise.all(Array.from({ length: 50 }, () => compileSession(input)))
    const floorSamples: number[] = []
    const missSamples: number[] = []
    for (let n = 0; n < 6000; n++) {
      const text = `${sql} /* ${n} */`
      let start = process.hrtime.bigint()
      deparseSync(parseSync(text) as never, { pretty: false })
      const floorNs = process.hrtime.bigint() - start
      start = process.hrtime.bigint()
      rewrite(text, sessions[n % sessions.length]!)
      const missNs = process.hrtime.bigint() - start
      if (n >= 500) {
        floorSamples.push(Number(floorNs) / 1000)
        missSamples.push(Number(missNs) / 1000)
      }
    }
    const floor = summarize(floorSamples)
    const miss = summarize(missSamples)
    const warm = await compileSession(input)
    rewrite(sql, warm)
    const hit = timeMicros(() => rewrite(sql, warm), 20000)
    console.log(
      `| ${name} | ${fmt(floor.median)} | ${fmt(miss.median)} / ${fmt(miss.p95)} | ${fmt(miss.median / floor.median, 2)}× | ${fmt(hit.median, 2)} / ${fmt(hit.p95, 2)} |`,
    )
  }
}
