import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure } from './fixtures/failure.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { upstreamOf } from './fixtures/upstream-handle.js'

/** What no plan alice sees may show: her tenant, the mask, the denied column, hidden tables. */
const SECRETS = ['acme', "'***'", 'ssn', 'secrets', 'tenant =', 'Subquery Scan', 'NULL::']

const FORMATS = ['', 'VERBOSE', 'FORMAT JSON', 'VERBOSE, FORMAT JSON', 'FORMAT YAML', 'FORMAT XML']
const STATEMENTS = [
  'SELECT * FROM customers',
  'SELECT id, email FROM customers WHERE id = 1',
  'SELECT email, count(*) FROM customers GROUP BY email ORDER BY email',
  'SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id',
  'SELECT id FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE amount > 5)',
]

/**
 * EXPLAIN through Palisade (docs/rewrite.md#explain): the plan of the user's statement, with
 * the row filters, masks, denied columns and fences redacted, in every format; estimates stay.
 */
export function runExplainPrivacyCases(name: string, makeHarness: MakeHarness): void {
  describe(`EXPLAIN keeps the policies private, over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
      // An index on the filter column, so the filter also lands in index conditions.
      const upstream = await upstreamOf(h)
      await upstream.exec('CREATE INDEX customers_tenant_idx ON public.customers (tenant)')
      await upstream.close()
    })
    afterAll(() => h?.close())

    const plan = async (user: string, sql: string) => {
      const client = await h.connect(user)
      const result = await client.query(sql)
      await client.end()
      return result
    }
    // The client parses a json column (FORMAT JSON), as it does PostgreSQL's own.
    const textOf = (rows: Record<string, unknown>[]) =>
      rows
        .map((r) => r['QUERY PLAN'])
        .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
        .join('\n')

    it('shows node types and estimates, and nothing the policies hide, in every format', async () => {
      for (const statement of STATEMENTS) {
        for (const options of FORMATS) {
          const sql = `EXPLAIN ${options ? `(${options}) ` : ''}${statement}`
          const result = await plan('alice', sql)
          const text = textOf(result.rows)
          for (const secret of SECRETS) expect(text, sql).not.toContain(secret)
          expect(text, sql).toMatch(/Scan/)
          expect(text, sql).toMatch(/Plan.Rows|rows=\d+/)
          if (options.includes('JSON')) {
            expect(result.fields[0]?.dataTypeID, sql).toBe(114)
            const [query] = JSON.parse(text) as { Plan: Record<string, unknown> }[]
            expect(typeof query?.Plan['Total Cost'], sql).toBe('number')
          }
          if (options.includes('XML')) expect(text, sql).toContain('<Node-Type>')
          if (options.includes('YAML')) expect(text, sql).toContain('Node Type: ')
        }
      }
    })

    it('marks what the policies add and keeps what the user wrote', async () => {
      const all = textOf((await plan('alice', 'EXPLAIN SELECT * FROM customers')).rows)
      expect(all).toContain('(row policy)')
      expect(all).toMatch(/Scan on customers/)
      const point = textOf(
        (await plan('alice', 'EXPLAIN SELECT name FROM customers WHERE id = 1')).rows,
      )
      expect(point).toContain('id = 1')
      expect(point).toContain('(row policy)')
      const masked = textOf(
        (await plan('alice', 'EXPLAIN (VERBOSE) SELECT email FROM customers ORDER BY 1')).rows,
      )
      for (const secret of SECRETS) expect(masked).not.toContain(secret)
      expect(masked).toMatch(/email|\(masked\)/)
    })

    it('shows an unpoliced session the same plan shape without markers', async () => {
      const text = textOf((await plan('carol', 'EXPLAIN SELECT * FROM customers')).rows)
      expect(text).toMatch(/^Seq Scan on customers/)
      expect(text).not.toContain('(row policy)')
    })

    it('answers over the extended protocol too, and refuses ANALYZE', async () => {
      const alice = await h.connect('alice')
      const result = await alice.query({
        text: 'EXPLAIN SELECT name FROM customers WHERE id = $1',
        values: [1],
      })
      const text = textOf(result.rows)
      expect(text).toMatch(/Scan/)
      for (const secret of SECRETS) expect(text).not.toContain(secret)
      expect((await failure(alice.query('EXPLAIN ANALYZE SELECT * FROM customers'))).code).toBe(
        '0A000',
      )
      expect((await failure(alice.query('EXPLAIN SELECT * FROM secrets'))).code).toBe('42P01')
    })
  })
}
