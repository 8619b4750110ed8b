import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure } from './fixtures/failure.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'

const conjuncts = (n: number) =>
  `SELECT count(*) AS n FROM orders WHERE ${Array(n).fill('id > 0').join(' AND ')}`
const inList = (n: number) =>
  `SELECT id FROM orders WHERE id IN (${Array.from({ length: n }, (_, i) => i).join(', ')}) ORDER BY id`

/** Just under the default size limit of 1 MiB; its rewrite takes far longer than 400 ms. */
const SLOW_CONJUNCTS = 75_000

/**
 * Long enough to be rewritten in a worker, cheap to rewrite: the padding is a comment. A worker
 * started to replace a stopped one serves it well within a short budget, even on a busy machine.
 */
const longButCheap = () =>
  `SELECT id FROM orders WHERE id IN (10, 11, 12, 13) /* ${'x'.repeat(5000)} */ ORDER BY id`

/** Size, depth and time limits of one statement, and sessions that go on beside a costly one. */
/** Statements nested deeper than the stack allows, then one a worker's stack holds. */
async function deepStatements(h: Harness): Promise<void> {
  const alice = await h.connect('alice')
  const deep = `SELECT ${'(SELECT '.repeat(3000)}1${')'.repeat(3000)} FROM orders`
  expect(await failure(alice.query(deep))).toEqual({
    code: '54001',
    message: 'stack depth limit exceeded',
  })
  // A short statement too deep for the main thread's stack is rewritten in a worker.
  const nested = `SELECT ${'-('.repeat(1500)}id${')'.repeat(1500)} AS v FROM orders ORDER BY id`
  expect(nested.length).toBeLessThan(4096 * 2)
  expect((await alice.query(nested)).rows).toEqual([{ v: 10 }, { v: 11 }])
  expect((await alice.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
}

export function runStatementLimitCases(name: string, makeHarness: MakeHarness): void {
  describe(`statement limits, over ${name}`, () => {
    let h: Harness
    // A roomy budget: a busy machine's rewrite of an ordinary long statement (a worker's first,
    // with the session to compile) must not be taken for one over budget. The budget's own test
    // makes a data plane with a short one.
    beforeAll(async () => {
      h = await makeHarness({ plane: { rewriteTimeoutMs: 20_000 } })
    })
    afterAll(() => h?.close())

    it('rewrites a long statement off the main thread with the policies applied', async () => {
      const alice = await h.connect('alice')
      const sql = inList(2000)
      expect(sql.length).toBeGreaterThan(4096)
      // alice sees acme's orders only: 12 and 13 are globex's.
      expect((await alice.query(sql)).rows).toEqual([{ id: 10 }, { id: 11 }])
      // Extended protocol: Bind, Execute and Sync wait for the Parse being rewritten.
      const withParameter = sql.replace('WHERE id IN', 'WHERE id > $1 AND id IN')
      for (let i = 0; i < 3; i++) {
        expect((await alice.query(withParameter, [i])).rows).toEqual([{ id: 10 }, { id: 11 }])
      }
      const row = (await h.auditRows()).find((r) => r.original_query === sql)
      expect(row).toMatchObject({ status: 'success' })
      expect(row?.rewritten_query).toContain('acme')
    })

    it('refuses a statement over the size limit (54000), audits it and keeps the session', async () => {
      const alice = await h.connect('alice')
      const sql = conjuncts(100_000)
      const bytes = Buffer.byteLength(sql)
      const expected = {
        code: '54000',
        message: `statement of ${bytes} bytes exceeds the limit of ${1024 * 1024} bytes`,
      }
      expect(await failure(alice.query(sql))).toEqual(expected)
      const withParameter = sql.replace('WHERE', 'WHERE id > $1 AND')
      expect(await failure(alice.query(withParameter, [0]))).toEqual({
        ...expected,
        message: `statement of ${Buffer.byteLength(withParameter)} bytes exceeds the limit of ${1024 * 1024} bytes`,
      })
      expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      const rows = (await h.auditRows()).filter(
        (r) => r.original_query === sql || r.original_query === withParameter,
      )
      expect(rows.map((r) => r.status)).toEqual(['error', 'error'])
    })

    it('answers nesting deeper than the stack allows as PostgreSQL does (54001)', async () => {
      await deepStatements(h)
    })

    it('stops a rewrite over its time budget (54001) and goes on serving', async () => {
      const tight = await makeHarness({ plane: { rewriteTimeoutMs: 400 } })
      try {
        const alice = await tight.connect('alice')
        const slow = conjuncts(SLOW_CONJUNCTS)
        const refused = await failure(alice.query(slow))
        expect(refused).toEqual({ code: '54001', message: 'statement is too complex' })
        const slowExtended = slow.replace('WHERE', 'WHERE id > $1 AND')
        expect(await failure(alice.query(slowExtended, [0]))).toEqual(refused)
        // The stopped worker is replaced: the next long statement is served.
        expect((await alice.query(longButCheap())).rows).toEqual([{ id: 10 }, { id: 11 }])
        const row = (await tight.auditRows()).find((r) => r.original_query === slow)
        expect(row).toMatchObject({ status: 'error' })
        expect(row?.error_message).toContain('ms budget')
      } finally {
        await tight.close()
      }
    })

    it('serves other sessions while a long statement is rewritten', async () => {
      const [slow, quick] = await Promise.all([h.connect('alice'), h.connect('alice')])
      let slowDone = false
      const pending = slow.query(conjuncts(SLOW_CONJUNCTS)).then(
        () => {
          slowDone = true
        },
        () => {
          slowDone = true
        },
      )
      // Give the long statement time to reach the worker before the quick session starts.
      await new Promise((resolve) => setTimeout(resolve, 20))
      for (let i = 0; i < 5; i++) {
        expect((await quick.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      }
      expect(slowDone).toBe(false)
      await pending
    })
  })
}
