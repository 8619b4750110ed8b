import type pg from 'pg'
import Cursor from 'pg-cursor'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure } from './fixtures/failure.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { hideOrder11FromAlice } from './fixtures/hide-order.js'

/** Rows of alice's orders before the change: 10 and 11; after it, 10 only. */
const BEFORE = [{ id: 10 }, { id: 11 }]

/** Cursors and portals opened before an access change are never read under the new rules. */
export function runStaleCursorCases(name: string, makeHarness: MakeHarness): void {
  describe(`cursors across access changes, over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
    })
    afterAll(() => h?.close())

    /** Hides order 11 from alice while `body` runs; returns once her session sees it. */
    async function tightened(client: pg.Client, body: () => Promise<void>): Promise<void> {
      const reveal = await hideOrder11FromAlice(h.store, h.shop)
      try {
        await body()
      } finally {
        await reveal()
        // The next statement of the client rebuilds its session again.
        void client
      }
    }

    it('refuses FETCH and MOVE on a cursor declared before the change, in its transaction', async () => {
      const alice = await h.connect('alice')
      await alice.query('BEGIN')
      await alice.query('DECLARE c CURSOR FOR SELECT id FROM orders ORDER BY id')
      expect((await alice.query('FETCH 1 FROM c')).rows).toEqual([{ id: 10 }])
      await tightened(alice, async () => {
        const fetched = await failure(alice.query('FETCH ALL FROM c'))
        expect(fetched).toEqual({
          code: '55000',
          message: 'cursor "c" was opened before the access rules changed; open it again',
        })
        await alice.query('ROLLBACK')
        await alice.query('BEGIN')
        await alice.query('DECLARE d CURSOR FOR SELECT id FROM orders ORDER BY id')
        expect((await alice.query('FETCH ALL FROM d')).rows).toEqual([{ id: 10 }])
        await alice.query('COMMIT')
      })
      const rows = (await h.auditRows()).filter((r) => r.original_query === 'FETCH ALL FROM c')
      expect(rows[0]).toMatchObject({ status: 'error' })
      expect(rows[0]?.error_message).not.toContain('hide-11')
    })

    it('refuses a WITH HOLD cursor across commits, and still closes it', async () => {
      const alice = await h.connect('alice')
      await alice.query('DECLARE h CURSOR WITH HOLD FOR SELECT id FROM orders ORDER BY id')
      await tightened(alice, async () => {
        for (const sql of ['FETCH ALL FROM h', 'MOVE 1 IN h', 'FETCH ABSOLUTE 2 FROM h']) {
          const error = await failure(alice.query(sql))
          expect(error.code, sql).toBe('55000')
        }
        await alice.query('CLOSE h')
        expect((await alice.query('SELECT id FROM orders ORDER BY id')).rows).toEqual([{ id: 10 }])
      })
    })

    it('refuses to resume a portal suspended before the change (extended protocol)', async () => {
      const alice = await h.connect('alice')
      const cursor = alice.query(new Cursor('SELECT id FROM orders ORDER BY id'))
      const read = (n: number) =>
        new Promise<unknown[]>((resolve, reject) =>
          cursor.read(n, (error, rows) => (error ? reject(error) : resolve(rows))),
        )
      expect(await read(1)).toEqual([{ id: 10 }])
      await tightened(alice, async () => {
        const error = await failure(read(5))
        // At once: pg-cursor closes an errored cursor on the ReadyForQuery its Sync asks for,
        // and would wait forever for another one if that one were read first.
        const closed = new Promise<void>((resolve) => cursor.close(() => resolve()))
        expect(error.code).toBe('55000')
        expect(error.message).toContain('before the access rules changed')
        await closed
      })
      // The connection is still usable, under the current rules.
      expect((await alice.query('SELECT id FROM orders ORDER BY id')).rows).toEqual(BEFORE)
    })

    it('runs cursors declared after the change under the new rules', async () => {
      const alice = await h.connect('alice')
      await tightened(alice, async () => {
        await alice.query('BEGIN')
        await alice.query('DECLARE n CURSOR FOR SELECT id FROM orders ORDER BY id')
        expect((await alice.query('FETCH ALL FROM n')).rows).toEqual([{ id: 10 }])
        await alice.query('COMMIT')
        const cursor = alice.query(new Cursor('SELECT id FROM orders ORDER BY id'))
        const rows = await new Promise<unknown[]>((resolve, reject) =>
          cursor.read(10, (error, r) => (error ? reject(error) : resolve(r))),
        )
        expect(rows).toEqual([{ id: 10 }])
        await new Promise<void>((resolve) => cursor.close(() => resolve()))
      })
    })
  })
}
