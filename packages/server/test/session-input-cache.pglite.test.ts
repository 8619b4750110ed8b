/**
 * With the embedded store, a login reuses the session input an earlier login of the same user
 * read (data-plane/session-input-cache.ts) until any change commits: it must never let a
 * reconnecting client keep rules, attributes or access it no longer has.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { failure } from './fixtures/failure.js'
import { type Harness, pgliteHarness } from './fixtures/harness.js'
import { hideOrder11FromAlice } from './fixtures/hide-order.js'

const ORDERS = 'SELECT id FROM orders ORDER BY id'

describe('session inputs kept between logins (embedded store)', () => {
  let h: Harness
  let reads: ReturnType<typeof vi.spyOn>
  beforeAll(async () => {
    h = await pgliteHarness()
    reads = vi.spyOn(h.store, 'buildSessionInput')
  })
  afterAll(async () => {
    reads?.mockRestore()
    await h?.close()
  })

  /** Connects, reads alice's orders, disconnects; returns the ids. */
  async function aliceSees(): Promise<number[]> {
    const alice = await h.connect('alice')
    try {
      return (await alice.query(ORDERS)).rows.map((r: { id: number }) => r.id)
    } finally {
      await alice.end()
    }
  }

  it('reads the store once for a reconnecting client, and again after any change', async () => {
    const { store, shop } = h
    expect(await aliceSees()).toEqual([10, 11])
    const before = reads.mock.calls.length
    expect(await aliceSees()).toEqual([10, 11])
    expect(await aliceSees()).toEqual([10, 11])
    expect(reads.mock.calls.length).toBe(before)

    // A new rule: the next login reads the store and never sees the hidden row.
    const reveal = await hideOrder11FromAlice(store, shop)
    expect(await aliceSees()).toEqual([10])
    expect(reads.mock.calls.length).toBe(before + 1)
    await reveal()
    expect(await aliceSees()).toEqual([10, 11])

    // Another tenant's attribute: other rows at once.
    await store.users.update(shop.alice.id, { attributes: { tenant: 'globex' } }, shop.admin.id)
    try {
      expect(await aliceSees()).not.toContain(10)
    } finally {
      await store.users.update(shop.alice.id, { attributes: { tenant: 'acme' } }, shop.admin.id)
    }
    expect(await aliceSees()).toEqual([10, 11])
  })

  it('refuses a deactivated user and a revoked access at the next login', async () => {
    const { store, shop } = h
    expect(await aliceSees()).toEqual([10, 11])
    await store.users.update(shop.alice.id, { is_active: false }, shop.admin.id)
    try {
      expect((await failure(h.connect('alice'))).code).toBeDefined()
    } finally {
      await store.users.update(shop.alice.id, { is_active: true }, shop.admin.id)
    }
    expect(await aliceSees()).toEqual([10, 11])

    await store.access.setUsers(shop.datasourceId, { user_ids: [shop.carol.id] }, shop.admin.id)
    try {
      expect(await failure(h.connect('alice'))).toMatchObject({ code: '3D000' })
    } finally {
      await store.access.setUsers(
        shop.datasourceId,
        { user_ids: [shop.alice.id, shop.carol.id] },
        shop.admin.id,
      )
    }
    // A refusal is not kept either: access given back works at once.
    expect(await aliceSees()).toEqual([10, 11])
  })

  it("never hands one user's session to another", async () => {
    expect(await aliceSees()).toEqual([10, 11])
    const carol = await h.connect('carol')
    try {
      expect((await carol.query(ORDERS)).rows.map((r: { id: number }) => r.id)).toEqual([
        10, 11, 12, 13,
      ])
      expect((await carol.query('SELECT current_user AS u')).rows).toEqual([{ u: 'carol' }])
    } finally {
      await carol.end()
    }
    expect(await aliceSees()).toEqual([10, 11])
  })
})
