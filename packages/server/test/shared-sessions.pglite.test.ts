/**
 * Connections of the same user under the same rules share one compiled session
 * (data-plane/compiled-sessions.ts): a reconnecting client finds its statements rewritten
 * already, and another user never gets its session.
 */
import { runtimeStats } from '@palisade/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, pgliteHarness } from './fixtures/harness.js'

describe('compiled sessions shared by connections', () => {
  let h: Harness
  beforeAll(async () => {
    h = await pgliteHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  it("serves a reconnecting client's statement from the rewrite it made before, and no one else's", async () => {
    const sql = 'SELECT id FROM orders /* shared sessions */ ORDER BY id'
    const first = await h.connect('alice')
    expect((await first.query(sql)).rows).toEqual([{ id: 10 }, { id: 11 }])
    await first.end()

    const misses = runtimeStats.rewriteMisses
    const again = await h.connect('alice')
    expect((await again.query(sql)).rows).toEqual([{ id: 10 }, { id: 11 }])
    // Its statement was rewritten once, by the first connection.
    expect(runtimeStats.rewriteMisses).toBe(misses)

    // carol's rules differ: her own rewrite, her own rows.
    const carol = await h.connect('carol')
    expect((await carol.query(sql)).rows).toEqual([{ id: 10 }, { id: 11 }, { id: 12 }, { id: 13 }])
    expect(runtimeStats.rewriteMisses).toBe(misses + 1)
    // And alice, connected beside her, still sees her tenant's rows only.
    expect((await again.query(sql)).rows).toEqual([{ id: 10 }, { id: 11 }])
  })
})
