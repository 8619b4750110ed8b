import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { type UpstreamHandle, upstreamOf } from './fixtures/upstream-handle.js'

/** alice may not see `customers.ssn`; `{t}` is empty or `public.` through Palisade, `twin.` directly. */
const SPELLINGS = [
  'SELECT id, ssn FROM {t}customers',
  'SELECT id, SsN FROM {t}customers',
  'SELECT id, "ssn" FROM {t}customers',
  'SELECT id, U&"\\0073sn" FROM {t}customers',
  'SELECT id, U&"*0073*0073n" UESCAPE \'*\' FROM {t}customers',
  'SELECT id, U&"\\+000073sn" FROM {t}customers',
  'SELECT id, U&"\\0053SN" FROM {t}customers',
  'SELECT c.id, c.U&"\\0073sn" FROM {t}customers c',
  'SELECT id, {t}customers.U&"\\0073sn" FROM {t}customers',
  'SELECT id FROM {t}customers WHERE U&"\\0073sn" IS NOT NULL',
  'SELECT id FROM {t}customers GROUP BY id, U&"\\0073sn"',
]

type Answer = { code?: string; message: string; detail?: string; hint?: string }

const answer = async (run: () => Promise<unknown>): Promise<Answer> => {
  try {
    await run()
  } catch (error) {
    const e = error as Answer
    return {
      code: e.code,
      message: e.message,
      ...(e.detail ? { detail: e.detail } : {}),
      ...(e.hint ? { hint: e.hint } : {}),
    }
  }
  throw new Error('expected an error')
}

/**
 * A denied column named in any spelling (plain, quoted, case variants, `U&"…"` with any
 * escape, qualified by table, alias or schema) fails exactly as PostgreSQL fails a missing
 * column of that spelling, over both protocols.
 */
export function runDeniedColumnSpellingCases(name: string, makeHarness: MakeHarness): void {
  describe(`denied columns answer as missing ones, over ${name}`, () => {
    let h: Harness
    let upstream: UpstreamHandle
    beforeAll(async () => {
      h = await makeHarness()
      upstream = await upstreamOf(h)
      // alice's view of customers, as a real table: what a missing column looks like.
      await upstream.exec(`CREATE SCHEMA twin;
        CREATE TABLE twin.customers (id int, tenant text, name text, email text)`)
    })
    afterAll(async () => {
      await upstream?.close()
      await h?.close()
    })

    it('gives the missing column’s error, message included, and never names a policy', async () => {
      const alice = await h.connect('alice')
      for (const spelling of SPELLINGS) {
        const direct = await answer(() => upstream.query(spelling.replaceAll('{t}', 'twin.')))
        expect(direct.code, spelling).toBe('42703')
        for (const qualifier of ['', 'public.']) {
          const sql = spelling.replaceAll('{t}', qualifier)
          const simple = await answer(() => alice.query(sql))
          const extended = await answer(() => alice.query({ text: sql, values: [] }))
          expect(simple, sql).toEqual(direct)
          expect(extended, sql).toEqual(direct)
          for (const policy of Object.values(h.shop.policies)) {
            expect(JSON.stringify(simple)).not.toContain(policy.name)
          }
        }
      }
      // Still usable afterwards: the errors left no transaction behind.
      expect((await alice.query('SELECT count(*)::int AS n FROM customers')).rows).toEqual([
        { n: 2 },
      ])
    })
  })
}
