import { SYSTEM_ACTOR_ID } from '@palisade/store'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()
/** Sleeps until a little after `iso`: the next statement is the first one past the bound. */
const pastBound = async (iso: string) => {
  const wait = Date.parse(iso) - Date.now() + 30
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
}
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
  )

/**
 * Time-bound grants (docs/policies.md, "Time-bound access") through the data plane: an open
 * session gains and loses them at its first statement past a window bound, with no admin action.
 */
export function runTimeBoundAccessCases(name: string, makeHarness: MakeHarness): void {
  describe(`time-bound access, over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
    })
    afterAll(() => h?.close())

    it('ends an open session at its first statement after its access expired', async () => {
      const { store, shop } = h
      const until = inMs(1500)
      await store.access.grant(
        shop.datasourceId,
        { scope: 'user', id: shop.bob.id },
        { valid_until: until },
        shop.admin.id,
      )
      const bob = await h.connect('bob')
      expect((await bob.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 4 }])
      await pastBound(until)
      expect(await failure(bob.query('SELECT count(*)::int AS n FROM orders'))).toEqual({
        code: '08006',
        message: 'Session context not found - please reconnect',
      })
      await expect(h.connect('bob')).rejects.toThrow()
      const audit = await store.audit.admin.list({ resource_id: shop.datasourceId, page_size: 50 })
      const expiry = audit.data.find(
        (e) => e.action === 'revoke_access' && JSON.parse(e.changes ?? '{}').reason === 'expired',
      )
      // The sweep runs on its own timer; give it the same second the session had.
      if (!expiry) await new Promise((r) => setTimeout(r, 1000))
      const again = await store.audit.admin.list({
        resource_id: shop.datasourceId,
        action: 'revoke_access',
        page_size: 50,
      })
      const entry = again.data.find((e) => JSON.parse(e.changes ?? '{}').user_id === shop.bob.id)
      expect(entry?.actor_id).toBe(SYSTEM_ACTOR_ID)
      expect(JSON.parse(entry?.changes ?? '{}')).toMatchObject({ reason: 'expired', scope: 'user' })
    })

    it('lifts exactly the policies of an expired role membership in the open session', async () => {
      const { store, shop } = h
      const a = shop.admin.id
      const role = await store.roles.create({ name: 'incident-quarantine' }, a)
      await store.assignments.assign(
        shop.datasourceId,
        { policy_id: shop.policies.hide.id, role_id: role.id },
        a,
      )
      const until = inMs(1500)
      await store.roles.addMembers(role.id, { user_ids: [shop.carol.id], valid_until: until }, a)
      const carol = await h.connect('carol')
      expect(await failure(carol.query('SELECT value FROM secrets'))).toMatchObject({
        code: '42P01',
      })
      expect((await carol.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 4 }])
      await pastBound(until)
      expect((await carol.query('SELECT value FROM secrets')).rows).toEqual([
        { value: 'the recipe' },
      ])
      expect((await carol.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 4 }])
    })

    it('applies an assignment that starts later in the open session from its start', async () => {
      const { store, shop } = h
      const from = inMs(1200)
      const until = inMs(2600)
      await store.assignments.assign(
        shop.datasourceId,
        {
          policy_id: shop.policies.orders.id,
          user_id: shop.carol.id,
          valid_from: from,
          valid_until: until,
        },
        shop.admin.id,
      )
      await store.users.update(shop.carol.id, { attributes: { tenant: 'acme' } }, shop.admin.id)
      const carol = await h.connect('carol')
      const count = async () =>
        (await carol.query('SELECT count(*)::int AS n FROM orders')).rows[0]?.n as number
      expect(await count()).toBe(4)
      await pastBound(from)
      expect(await count()).toBe(2)
      await pastBound(until)
      expect(await count()).toBe(4)
    })
  })
}
