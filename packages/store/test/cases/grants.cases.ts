import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, Store, User } from '../../src/index.js'
import { SYSTEM_ACTOR_ID } from '../../src/index.js'
import { auditOf, bootstrapAdmin, PASSWORD, storeError, unique } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()
const sleepUntil = async (iso: string, extra = 50) => {
  const wait = Date.parse(iso) - Date.now() + extra
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
}

/** Polls until `check` holds (the expiry sweep runs on its own timer). */
async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Time-bound memberships, access and assignments, their expiry, and access requests. */
export function grantsCases(makeStore: MakeStore): void {
  describe('time-bound grants and access requests', () => {
    let store: Store
    let admin: User
    let other: User
    let ds: Datasource
    const newUser = () =>
      store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)

    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
      other = await store.users.create(
        { username: unique('admin'), password: PASSWORD, is_admin: true },
        admin.id,
      )
      ds = await store.datasources.create(
        { name: unique('shop'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.access.setAll(ds.id, { enabled: true }, admin.id)
    })
    afterAll(() => store.close())

    it('a membership holds only inside its window, and its end is audited once by the system', async () => {
      const user = await newUser()
      const role = await store.roles.create({ name: unique('r') }, admin.id)
      const until = inMs(1200)
      await store.roles.addMembers(role.id, { user_ids: [user.id], valid_until: until }, admin.id)
      const during = await store.buildSessionInput(user.username, ds.name)
      expect(during.user.roles).toContain(role.name)
      expect(during.validUntil).toBe(Date.parse(until))
      expect((await store.roles.get(role.id)).members).toEqual([
        { id: user.id, username: user.username, valid_from: null, valid_until: until },
      ])
      await sleepUntil(until)
      const after = await store.buildSessionInput(user.username, ds.name)
      expect(after.user.roles).not.toContain(role.name)
      expect((await store.roles.get(role.id)).members).toEqual([])
      expect(await store.roles.ofUser(user.id)).toEqual([])
      await eventually(async () =>
        (await auditOf(store, role.id)).some((e) => e.action === 'remove_member'),
      )
      const expiry = (await auditOf(store, role.id)).filter((e) => e.action === 'remove_member')
      expect(expiry).toHaveLength(1)
      expect(expiry[0]?.actor_id).toBe(SYSTEM_ACTOR_ID)
      expect(expiry[0]?.changes).toMatchObject({ user_id: user.id, reason: 'expired' })
      // Once swept, the same membership can be granted again.
      await store.roles.addMembers(role.id, { user_ids: [user.id] }, admin.id)
      expect((await store.buildSessionInput(user.username, ds.name)).user.roles).toContain(
        role.name,
      )
    })

    it('a membership that starts later is absent until then, and the session knows when to look again', async () => {
      const user = await newUser()
      const role = await store.roles.create({ name: unique('r') }, admin.id)
      const from = inMs(900)
      await store.roles.putMember(role.id, user.id, { valid_from: from }, admin.id)
      const before = await store.buildSessionInput(user.username, ds.name)
      expect(before.user.roles).not.toContain(role.name)
      expect(before.validUntil).toBe(Date.parse(from))
      await sleepUntil(from)
      const after = await store.buildSessionInput(user.username, ds.name)
      expect(after.user.roles).toContain(role.name)
      expect(after.validUntil).toBeUndefined()
    })

    it('time-bound datasource access ends the session build when it expires', async () => {
      const closed = await store.datasources.create(
        { name: unique('closed'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const user = await newUser()
      const until = inMs(1000)
      await store.access.grant(
        closed.id,
        { scope: 'user', id: user.id },
        { valid_until: until },
        admin.id,
      )
      expect((await store.access.listUsers(closed.id)).map((u) => u.valid_until)).toEqual([until])
      const during = await store.buildSessionInput(user.username, closed.name)
      expect(during.validUntil).toBe(Date.parse(until))
      // Replacing the list with the same user keeps the window.
      await store.access.setUsers(closed.id, { user_ids: [user.id] }, admin.id)
      expect((await store.access.listUsers(closed.id))[0]?.valid_until).toBe(until)
      await sleepUntil(until)
      await expect(store.buildSessionInput(user.username, closed.name)).rejects.toMatchObject({
        name: 'SessionDeniedError',
      })
      expect((await store.access.get(closed.id)).users).toEqual([])
      await eventually(async () =>
        (await auditOf(store, closed.id)).some(
          (e) => e.action === 'revoke_access' && e.changes?.reason === 'expired',
        ),
      )
    })

    it('a time-bound assignment reaches sessions only inside its window', async () => {
      const user = await newUser()
      const policy = await store.policies.create(
        {
          name: unique('deny'),
          policy_type: 'table_deny',
          targets: [{ schemas: ['*'], tables: ['t'] }],
        },
        admin.id,
      )
      const until = inMs(1000)
      const assignment = await store.assignments.assign(
        ds.id,
        { policy_id: policy.id, user_id: user.id, valid_until: until },
        admin.id,
      )
      expect(assignment.valid_until).toBe(until)
      const during = await store.buildSessionInput(user.username, ds.name)
      expect(during.policies.map((p) => p.id)).toContain(policy.id)
      expect(during.validUntil).toBe(Date.parse(until))
      await sleepUntil(until)
      const after = await store.buildSessionInput(user.username, ds.name)
      expect(after.policies.map((p) => p.id)).not.toContain(policy.id)
      expect(await store.assignments.list(ds.id)).not.toContainEqual(
        expect.objectContaining({ id: assignment.id }),
      )
      await eventually(async () =>
        (await auditOf(store, assignment.id)).some(
          (e) => e.action === 'unassign' && e.changes?.reason === 'expired',
        ),
      )
    })

    it('refuses windows that end before they start or have already ended', async () => {
      const user = await newUser()
      const role = await store.roles.create({ name: unique('r') }, admin.id)
      const past = await storeError(
        store.roles.addMembers(
          role.id,
          { user_ids: [user.id], valid_until: inMs(-1000) },
          admin.id,
        ),
      )
      expect(past.status).toBe(422)
      const reversed = await storeError(
        store.roles.putMember(
          role.id,
          user.id,
          { valid_from: inMs(60_000), valid_until: inMs(30_000) },
          admin.id,
        ),
      )
      expect(reversed.status).toBe(422)
      expect(reversed.details[0]?.field).toBe('valid_until')
      expect((await store.roles.get(role.id)).members).toEqual([])
    })

    it('an approved request grants the role for the approved time; the requester cannot approve it', async () => {
      const user = await newUser()
      const role = await store.roles.create({ name: unique('r') }, admin.id)
      const request = await store.accessRequests.create(user.id, {
        role_id: role.id,
        duration_seconds: 3600,
        reason: 'incident 42',
      })
      expect(request).toMatchObject({ status: 'pending', kind: 'role', role_name: role.name })
      const again = await storeError(
        store.accessRequests.create(user.id, {
          role_id: role.id,
          duration_seconds: 60,
          reason: 'x',
        }),
      )
      expect(again.status).toBe(409)
      const longer = await storeError(
        store.accessRequests.approve(request.id, { duration_seconds: 7200 }, admin.id),
      )
      expect(longer.status).toBe(422)
      const start = Date.now()
      const approved = await store.accessRequests.approve(
        request.id,
        { duration_seconds: 600, comment: 'ok for 10 minutes' },
        admin.id,
      )
      expect(approved.status).toBe('approved')
      expect(approved.decided_by).toBe(admin.id)
      const grantedUntil = Date.parse(approved.granted_until ?? '')
      expect(grantedUntil).toBeGreaterThanOrEqual(start + 599_000)
      expect(grantedUntil).toBeLessThanOrEqual(Date.now() + 600_000)
      const member = (await store.roles.get(role.id)).members[0]
      expect(member?.valid_until).toBe(approved.granted_until)
      expect((await store.buildSessionInput(user.username, ds.name)).user.roles).toContain(
        role.name,
      )
      const twice = await storeError(store.accessRequests.approve(request.id, {}, other.id))
      expect(twice.code).toBe('not_pending')
      const audit = await auditOf(store, request.id)
      expect(audit.map((e) => e.action).sort()).toEqual(['approve', 'create'])
      expect(audit.find((e) => e.action === 'create')?.actor_id).toBe(user.id)

      const own = await store.accessRequests.create(admin.id, {
        role_id: role.id,
        duration_seconds: 60,
        reason: 'me',
      })
      const self = await storeError(store.accessRequests.approve(own.id, {}, admin.id))
      expect(self.status).toBe(403)
      expect((await store.accessRequests.approve(own.id, {}, other.id)).status).toBe('approved')
    })

    it('approval never shortens a lasting grant; deny and cancel close a request without a grant', async () => {
      const user = await newUser()
      const role = await store.roles.create({ name: unique('r') }, admin.id)
      await store.roles.addMembers(role.id, { user_ids: [user.id] }, admin.id)
      const r1 = await store.accessRequests.create(user.id, {
        role_id: role.id,
        duration_seconds: 60,
        reason: 'already have it',
      })
      const ok = await store.accessRequests.approve(r1.id, {}, admin.id)
      expect(ok.granted_until).toBeNull()
      expect((await store.roles.get(role.id)).members[0]).not.toHaveProperty('valid_until')

      const closed = await store.datasources.create(
        { name: unique('closed'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const r2 = await store.accessRequests.create(user.id, {
        datasource_id: closed.id,
        duration_seconds: 120,
        reason: 'report',
      })
      const denied = await store.accessRequests.deny(r2.id, { comment: 'no' }, admin.id)
      expect(denied).toMatchObject({ status: 'denied', decision_comment: 'no' })
      await expect(store.buildSessionInput(user.username, closed.name)).rejects.toMatchObject({
        name: 'SessionDeniedError',
      })
      const r3 = await store.accessRequests.create(user.id, {
        datasource_id: closed.id,
        duration_seconds: 120,
        reason: 'report, again',
      })
      expect((await storeError(store.accessRequests.cancel(r3.id, other.id))).status).toBe(404)
      expect((await store.accessRequests.cancel(r3.id, user.id)).status).toBe('cancelled')
      const mine = await store.accessRequests.list({ user_id: user.id })
      expect(mine.data.map((r) => r.status)).toEqual(['cancelled', 'denied', 'approved'])
      const both = await storeError(
        store.accessRequests.create(user.id, {
          role_id: role.id,
          datasource_id: closed.id,
          duration_seconds: 60,
          reason: 'x',
        }),
      )
      expect(both.status).toBe(422)
    })
  })
}
