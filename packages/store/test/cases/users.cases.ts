import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store, User } from '../../src/index.js'
import {
  auditOf,
  bootstrapAdmin,
  captureChanges,
  expectNoAudit,
  PASSWORD,
  SYSTEM_ACTOR,
  storeError,
  unique,
} from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

/** Users, passwords, attribute values and admin lockout (docs/resources.md#users). */
export function usersCases(makeStore: MakeStore): void {
  describe('users', () => {
    let store: Store
    let admin: User
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
      await store.attributes.create(
        { key: 'tenant', entity_type: 'user', value_type: 'integer' },
        admin.id,
      )
      await store.attributes.create(
        { key: 'vip', entity_type: 'user', value_type: 'boolean' },
        admin.id,
      )
      await store.attributes.create(
        { key: 'region', entity_type: 'user', value_type: 'string', allowed_values: ['eu', 'us'] },
        admin.id,
      )
      await store.attributes.create(
        { key: 'teams', entity_type: 'user', value_type: 'list' },
        admin.id,
      )
    })
    afterAll(() => store.close())

    it('creates a user with defaults and audits a snapshot without secrets', async () => {
      const user = await store.users.create(
        { username: unique('alice'), password: PASSWORD },
        admin.id,
      )
      expect(user).toMatchObject({ is_admin: false, is_active: true, email: null, attributes: {} })
      expect(user).not.toHaveProperty('password')
      const [entry] = await auditOf(store, user.id)
      expect(entry).toMatchObject({ resource_type: 'user', action: 'create', actor_id: admin.id })
      expect(entry?.changes.after).toEqual({
        username: user.username,
        is_admin: false,
        is_active: true,
        email: null,
        display_name: null,
        attributes: {},
        limits: null,
      })
      expect(JSON.stringify(entry)).not.toContain(PASSWORD)
    })

    it('accepts canonical string forms of attribute values and stores native JSON', async () => {
      const user = await store.users.create(
        {
          username: unique('bob'),
          password: PASSWORD,
          attributes: { tenant: '42', vip: 'true', region: 'eu', teams: ['a', 'b'] },
        },
        admin.id,
      )
      expect(user.attributes).toEqual({ tenant: 42, vip: true, region: 'eu', teams: ['a', 'b'] })
      expect((await store.users.get(user.id)).attributes).toEqual(user.attributes)
    })

    it('rejects invalid attributes with every problem listed and writes nothing', async () => {
      const error = await expectNoAudit(store, () =>
        store.users.create(
          {
            username: unique('carol'),
            password: PASSWORD,
            attributes: { tenant: 'x', nope: 1, region: 'asia', teams: 'a' },
          },
          admin.id,
        ),
      )
      expect(error.status).toBe(422)
      expect(error.code).toBe('validation_failed')
      expect(error.details.map((d) => [d.field, d.code]).sort()).toEqual([
        ['attributes.nope', 'unknown_attribute'],
        ['attributes.region', 'not_in_allowed_values'],
        ['attributes.teams', 'invalid_type'],
        ['attributes.tenant', 'invalid_type'],
      ])
    })

    it.each([
      ['a too short username', { username: 'ab' }, 'username', 'too_short'],
      ['a username starting with a digit', { username: '1abc' }, 'username', 'pattern'],
      ['an oversized username', { username: `a${'b'.repeat(60)}` }, 'username', 'too_long'],
      ['a password without a symbol', { password: 'Abcdefg12' }, 'password', 'pattern'],
      ['a short password', { password: 'Ab1!' }, 'password', 'too_short'],
      ['an email without @', { email: 'nobody' }, 'email', 'pattern'],
      ['an oversized display name', { display_name: 'x'.repeat(101) }, 'display_name', 'too_long'],
      ['a non-boolean is_admin', { is_admin: 'yes' }, 'is_admin', 'invalid_type'],
    ])('rejects %s with 422 and writes nothing', async (_name, patch, field, code) => {
      const error = await expectNoAudit(store, () =>
        store.users.create(
          { username: unique('dave'), password: PASSWORD, ...patch } as never,
          admin.id,
        ),
      )
      expect(error.status).toBe(422)
      expect(error.details).toContainEqual(expect.objectContaining({ field, code }))
    })

    it('rejects a missing password as required', async () => {
      const error = await expectNoAudit(store, () =>
        store.users.create({ username: unique('erin') } as never, admin.id),
      )
      expect(error.details).toContainEqual(
        expect.objectContaining({ field: 'password', code: 'required' }),
      )
    })

    it('rejects a duplicate username with 409 already_exists', async () => {
      const username = unique('frank')
      await store.users.create({ username, password: PASSWORD }, admin.id)
      const error = await expectNoAudit(store, () =>
        store.users.create({ username, password: PASSWORD }, admin.id),
      )
      expect([error.status, error.code]).toEqual([409, 'already_exists'])
    })

    it('answers 404 for unknown user ids on get, update, password and delete', async () => {
      const id = '0190f000-0000-7000-8000-000000000000'
      for (const call of [
        () => store.users.get(id),
        () => store.users.update(id, { is_active: false }, admin.id),
        () => store.users.setPassword(id, { password: PASSWORD }, admin.id),
        () => store.users.delete(id, admin.id),
      ]) {
        const error = await expectNoAudit(store, call)
        expect([error.status, error.code]).toEqual([404, 'not_found'])
      }
    })

    it('updates changed fields only, audits before/after and invalidates the user', async () => {
      const user = await store.users.create(
        { username: unique('gina'), password: PASSWORD },
        admin.id,
      )
      const events = await captureChanges(store, () =>
        store.users.update(
          user.id,
          { attributes: { tenant: 7 }, email: 'g@example.com' },
          admin.id,
        ),
      )
      expect(events).toEqual([{ type: 'user', userIds: [user.id], origin: 'local' }])
      const [entry] = await auditOf(store, user.id)
      expect(entry?.changes).toEqual({
        before: { email: null, attributes: {} },
        after: { email: 'g@example.com', attributes: { tenant: 7 } },
      })
    })

    it('writes nothing for an update that changes no stored value', async () => {
      const user = await store.users.create(
        { username: unique('hank'), password: PASSWORD },
        admin.id,
      )
      const before = await store.audit.admin.count()
      const events = await captureChanges(store, () =>
        store.users.update(user.id, { is_active: true }, admin.id),
      )
      expect(events).toEqual([])
      expect(await store.audit.admin.count()).toBe(before)
    })

    it('refuses a password in a user update with not_allowed', async () => {
      const user = await store.users.create(
        { username: unique('ivy'), password: PASSWORD },
        admin.id,
      )
      const error = await expectNoAudit(store, () =>
        store.users.update(user.id, { password: PASSWORD } as never, admin.id),
      )
      expect(error.details).toContainEqual(
        expect.objectContaining({ field: 'password', code: 'not_allowed' }),
      )
    })

    it('refuses to let an admin demote, deactivate or delete themselves', async () => {
      for (const call of [
        () => store.users.update(admin.id, { is_admin: false }, admin.id),
        () => store.users.update(admin.id, { is_active: false }, admin.id),
        () => store.users.delete(admin.id, admin.id),
      ]) {
        const error = await expectNoAudit(store, call)
        expect([error.status, error.code]).toEqual([409, 'admin_lockout'])
      }
    })

    it('refuses a change that would leave no active admin', async () => {
      const other = await store.users.create(
        { username: unique('root'), password: PASSWORD, is_admin: true },
        admin.id,
      )
      await store.users.update(other.id, { is_admin: false }, admin.id)
      // admin is now the only admin; another admin account cannot remove them either.
      const helper = await store.users.create(
        { username: unique('helper'), password: PASSWORD },
        admin.id,
      )
      const error = await expectNoAudit(store, () =>
        store.users.update(admin.id, { is_admin: false }, helper.id),
      )
      expect(error.code).toBe('admin_lockout')
    })

    it('sets a password as a SCRAM verifier and audits only a flag and timestamps', async () => {
      const user = await store.users.create(
        { username: unique('jack'), password: PASSWORD },
        admin.id,
      )
      expect(await store.verifyPassword(user.username, PASSWORD)).toMatchObject({ id: user.id })
      const updated = await store.users.setPassword(
        user.id,
        { password: 'New-Password-1' },
        admin.id,
      )
      expect(updated.password_changed_at >= user.password_changed_at).toBe(true)
      expect(await store.verifyPassword(user.username, PASSWORD)).toBeNull()
      expect(await store.verifyPassword(user.username, 'New-Password-1')).toMatchObject({
        id: user.id,
      })
      const [entry] = await auditOf(store, user.id)
      expect(entry?.changes.password_changed).toBe(true)
      expect(Object.keys(entry?.changes.after)).toEqual(['password_changed_at'])
      const auth = await store.getUserForAuth(user.username)
      expect(auth).toMatchObject({ exists: true, userId: user.id, iterations: 4096 })
      expect(Buffer.from(auth.salt, 'base64')).toHaveLength(16)
    })

    it('gives unknown and inactive users a deterministic fake verifier', async () => {
      const a = await store.getUserForAuth('ghost-user')
      const b = await store.getUserForAuth('ghost-user')
      expect(a.exists).toBe(false)
      expect(a.salt).toBe(b.salt)
      expect(a.iterations).toBe(4096)
      const user = await store.users.create(
        { username: unique('kim'), password: PASSWORD, is_active: false },
        admin.id,
      )
      expect((await store.getUserForAuth(user.username)).exists).toBe(false)
      expect(await store.verifyPassword(user.username, PASSWORD)).toBeNull()
      expect(await store.verifyPassword('ghost-user', PASSWORD)).toBeNull()
    })

    it('deletes a user with its memberships, access and assignments, auditing each unassign', async () => {
      const user = await store.users.create(
        { username: unique('leo'), password: PASSWORD },
        admin.id,
      )
      const role = await store.roles.create({ name: unique('r') }, admin.id)
      await store.roles.addMembers(role.id, { user_ids: [user.id] }, admin.id)
      const ds = await store.datasources.create(
        { name: unique('ds'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.access.setUsers(ds.id, { user_ids: [user.id] }, admin.id)
      const fn = await store.policies
        .create(
          {
            name: unique('p'),
            policy_type: 'table_deny',
            targets: [{ schemas: ['*'], tables: ['t'] }],
          },
          admin.id,
        )
        .catch(() => null)
      const assignment = fn
        ? await store.assignments.assign(ds.id, { policy_id: fn.id, user_id: user.id }, admin.id)
        : null
      const events = await captureChanges(store, () => store.users.delete(user.id, admin.id))
      expect(events).toContainEqual({ type: 'user', userIds: [user.id], origin: 'local' })
      const [deleted] = await auditOf(store, user.id)
      expect(deleted?.action).toBe('delete')
      expect(deleted?.changes.before).toMatchObject({
        role_ids: [role.id],
        datasource_ids: [ds.id],
      })
      if (assignment) {
        const [unassign] = await auditOf(store, assignment.id)
        expect(unassign?.changes).toMatchObject({
          reason: 'user_deleted',
          user_id: user.id,
          scope: 'user',
        })
      }
      expect((await store.roles.get(role.id)).members).toEqual([])
      expect(await store.access.listUsers(ds.id)).toEqual([])
    })

    it('lists users oldest first with search, paging and clamping', async () => {
      const tag = unique('zz')
      for (const i of [1, 2, 3])
        await store.users.create({ username: `${tag}u${i}`, password: PASSWORD }, admin.id)
      const page = await store.users.list({ search: tag.toUpperCase(), page_size: 2 })
      expect(page.total).toBe(3)
      expect(page.data.map((u) => u.username)).toEqual([`${tag}u1`, `${tag}u2`])
      expect((await store.users.list({ search: tag, page: 2, page_size: 2 })).data).toHaveLength(1)
      expect((await store.users.list({ page_size: 1000 })).page_size).toBe(100)
      const error = await storeError(store.users.list({ page: 0 }))
      expect([error.status, error.code]).toEqual([400, 'invalid_parameter'])
    })

    it('uses the system actor only for bootstrap', async () => {
      const page = await store.audit.admin.list({ actor_id: SYSTEM_ACTOR })
      expect(page.data.every((e) => e.resource_type === 'user')).toBe(true)
    })
  })
}
