/**
 * A query audit that falls behind its store paces the clients instead of losing rows: each
 * statement waits for the writer's backlog (QueryAuditWriter.backlog) before it runs.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Harness, pgliteHarness } from './fixtures/harness.js'

describe('statements wait while the query audit is behind', () => {
  let h: Harness
  beforeAll(async () => {
    h = await pgliteHarness()
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await h?.close()
  })

  for (const protocol of ['simple', 'extended'] as const) {
    it(`holds a ${protocol}-protocol statement until the backlog clears, then answers it`, async () => {
      const alice = await h.connect('alice')
      const writer = h.store.audit.queries.writer
      let clear!: () => void
      const cleared = new Promise<void>((resolve) => {
        clear = resolve
      })
      const backlog = vi.spyOn(writer, 'backlog').mockImplementation(() => cleared)
      let answered = false
      const query =
        protocol === 'simple'
          ? alice.query('SELECT count(*)::int AS n FROM orders')
          : alice.query('SELECT count(*)::int AS n FROM orders WHERE id > $1', [0])
      const result = query.then((r) => {
        answered = true
        return r.rows
      })
      await new Promise((r) => setTimeout(r, 150))
      expect(answered).toBe(false)
      expect(backlog).toHaveBeenCalled()
      backlog.mockRestore()
      clear()
      expect(await result).toEqual([{ n: 2 }])
      // Nothing behind: the next statement runs at once, and every statement has its row.
      expect((await alice.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      await alice.end()
      const rows = await h.auditRows()
      expect(
        rows.some((r) => r.original_query.startsWith('SELECT count(*)::int AS n FROM orders')),
      ).toBe(true)
    })
  }
})
