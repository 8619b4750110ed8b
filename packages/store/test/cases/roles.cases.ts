import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Role, Store, User } from '../../src/index.js'
import {
  auditOf,
  bootstrapAdmin,
  captureChanges,
  expectNoAudit,
  PASSWORD,
  unique,
} from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

/** Roles, membership, inheritance rules and resolution (docs/roles-and-access.md#roles, docs/roles-and-access.md#roles). */
export function rolesCases(makeStore: MakeStore): void {
  describe('roles and the role graph', () => {
    let store: Store
    let admin: User
    const role = (name = unique('role'), extra: { is_active?: boolean } = {}) =>
      store.roles.create({ name, ...extra }, admin.id)
    const chain = async (length: number): Promise<Role[]> => {
      const roles: Role[] = []
      for (let i = 0; i <= length; i++) roles.push(await role())
      for (let i = 0; i < length; i++) {
        await store.roles.addParent(
          (roles[i] as Role).id,
          { parent_role_id: (roles[i + 1] as Role).id },
          admin.id,
        )
      }
      return roles
    }
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
    })
    afterAll(() => store.close())

    it.each([
      ['ab', 'too_short'],
      ['1role', 'pattern'],
      ['role name', 'pattern'],
      [`r${'x'.repeat(50)}`, 'too_long'],
    ])('rejects the role name %j with 422 and writes nothing', async (name, code) => {
      const error = await expectNoAudit(store, () => store.roles.create({ name }, admin.id))
      expect([error.status, error.code]).toEqual([422, 'validation_failed'])
      expect(error.details).toContainEqual(expect.objectContaining({ field: 'name', code }))
    })

    it('accepts names with dots, dashes and underscores and rejects duplicates with 409', async () => {
      const name = unique('a.b-c_')
      const created = await role(name)
      expect(created).toMatchObject({ name, is_active: true, direct_member_count: 0 })
      const error = await expectNoAudit(store, () => role(name))
      expect([error.status, error.code]).toEqual([409, 'already_exists'])
    })

    it('adds members all or nothing and audits one add_member per user', async () => {
      const r = await role()
      const u1 = await store.users.create({ username: unique('m'), password: PASSWORD }, admin.id)
      const u2 = await store.users.create({ username: unique('m'), password: PASSWORD }, admin.id)
      const events = await captureChanges(store, () =>
        store.roles.addMembers(r.id, { user_ids: [u1.id, u2.id, u1.id] }, admin.id),
      )
      expect(events).toEqual([{ type: 'user', userIds: [u1.id, u2.id], origin: 'local' }])
      const entries = await auditOf(store, r.id)
      expect(
        entries
          .filter((e) => e.action === 'add_member')
          .map((e) => e.changes.user_id)
          .sort(),
      ).toEqual([u1.id, u2.id].sort())
      const dup = await expectNoAudit(store, () =>
        store.roles.addMembers(r.id, { user_ids: [u1.id] }, admin.id),
      )
      expect([dup.status, dup.code]).toEqual([409, 'already_exists'])
      const missing = await expectNoAudit(store, () =>
        store.roles.addMembers(
          r.id,
          { user_ids: ['0190f000-0000-7000-8000-000000000001'] },
          admin.id,
        ),
      )
      expect([missing.status, missing.code, missing.details[0]?.field]).toEqual([
        404,
        'not_found',
        'user_ids[0]',
      ])
      const bad = await expectNoAudit(store, () =>
        store.roles.addMembers(r.id, { user_ids: [] }, admin.id),
      )
      expect(bad.status).toBe(422)
      await store.roles.removeMember(r.id, u2.id, admin.id)
      const gone = await expectNoAudit(store, () => store.roles.removeMember(r.id, u2.id, admin.id))
      expect(gone.status).toBe(404)
      expect((await store.roles.get(r.id)).members).toEqual([{ id: u1.id, username: u1.username }])
    })

    it('rejects a self parent and a cycle with 422 role_cycle', async () => {
      const [a, b, c] = await chain(2)
      const self = await expectNoAudit(store, () =>
        store.roles.addParent((a as Role).id, { parent_role_id: (a as Role).id }, admin.id),
      )
      expect([self.status, self.code]).toEqual([422, 'role_cycle'])
      const cycle = await expectNoAudit(store, () =>
        store.roles.addParent((c as Role).id, { parent_role_id: (a as Role).id }, admin.id),
      )
      expect([cycle.status, cycle.code]).toEqual([422, 'role_cycle'])
      const dup = await expectNoAudit(store, () =>
        store.roles.addParent((a as Role).id, { parent_role_id: (b as Role).id }, admin.id),
      )
      expect([dup.status, dup.code]).toEqual([409, 'already_exists'])
    })

    it('accepts a chain of exactly 10 edges and rejects 11 with role_depth_exceeded', async () => {
      const roles = await chain(10)
      const extra = await role()
      const error = await expectNoAudit(store, () =>
        store.roles.addParent((roles[10] as Role).id, { parent_role_id: extra.id }, admin.id),
      )
      expect([error.status, error.code]).toEqual([422, 'role_depth_exceeded'])
      const below = await role()
      const error2 = await expectNoAudit(store, () =>
        store.roles.addParent(below.id, { parent_role_id: (roles[0] as Role).id }, admin.id),
      )
      expect(error2.code).toBe('role_depth_exceeded')
    })

    it('counts depth above the parent plus one plus depth below the child', async () => {
      const upper = await chain(5) // 5 edges
      const lower = await chain(4) // 4 edges
      // Joining lower's top under upper's bottom: 5 + 1 + 4 = 10, accepted.
      await store.roles.addParent(
        (lower[4] as Role).id,
        { parent_role_id: (upper[0] as Role).id },
        admin.id,
      )
      const entries = await auditOf(store, (lower[4] as Role).id)
      expect(entries[0]).toMatchObject({ resource_type: 'role_inheritance', action: 'add_parent' })
      expect(entries[0]?.changes).toEqual({
        role_id: (lower[4] as Role).id,
        parent_role_id: (upper[0] as Role).id,
      })
    })

    it('answers 404 for an unknown parent or edge', async () => {
      const r = await role()
      const error = await expectNoAudit(store, () =>
        store.roles.addParent(
          r.id,
          { parent_role_id: '0190f000-0000-7000-8000-000000000002' },
          admin.id,
        ),
      )
      expect([error.status, error.details[0]?.field]).toEqual([404, 'parent_role_id'])
      const edge = await expectNoAudit(store, () =>
        store.roles.removeParent(r.id, '0190f000-0000-7000-8000-000000000002', admin.id),
      )
      expect(edge.status).toBe(404)
    })

    it('never lets two concurrent opposite edges both commit', async () => {
      const a = await role()
      const b = await role()
      const results = await Promise.allSettled([
        store.roles.addParent(a.id, { parent_role_id: b.id }, admin.id),
        store.roles.addParent(b.id, { parent_role_id: a.id }, admin.id),
      ])
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
      expect(rejected.reason.code).toBe('role_cycle')
    })

    it('resolves roles upward through active roles only and stops at an inactive role', async () => {
      const ds = await store.datasources.create(
        { name: unique('ds'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.access.setAll(ds.id, { enabled: true }, admin.id)
      const [base, mid, top] = await chain(2)
      const user = await store.users.create(
        { username: unique('res'), password: PASSWORD },
        admin.id,
      )
      await store.roles.addMembers((base as Role).id, { user_ids: [user.id] }, admin.id)
      const names = async () => (await store.buildSessionInput(user.username, ds.name)).user.roles
      expect(await names()).toEqual([(base as Role).name, (mid as Role).name, (top as Role).name])
      const events = await captureChanges(store, () =>
        store.roles.update((mid as Role).id, { is_active: false }, admin.id),
      )
      expect(events).toEqual([{ type: 'user', userIds: [user.id], origin: 'local' }])
      expect(await names()).toEqual([(base as Role).name])
      await store.roles.update((mid as Role).id, { is_active: true }, admin.id)
      expect(await names()).toHaveLength(3)
    })

    it('lists effective members with the role they are directly in', async () => {
      const [child, parent] = await chain(1)
      const p = parent as Role
      const c = child as Role
      const u1 = await store.users.create({ username: unique('aa'), password: PASSWORD }, admin.id)
      const u2 = await store.users.create({ username: unique('bb'), password: PASSWORD }, admin.id)
      await store.roles.addMembers(p.id, { user_ids: [u1.id] }, admin.id)
      await store.roles.addMembers(c.id, { user_ids: [u1.id, u2.id] }, admin.id)
      const members = await store.roles.effectiveMembers(p.id)
      expect(members).toEqual([
        {
          user_id: u1.id,
          username: u1.username,
          direct_role_id: p.id,
          direct_role_name: p.name,
          source: 'direct',
        },
        {
          user_id: u2.id,
          username: u2.username,
          direct_role_id: c.id,
          direct_role_name: c.name,
          source: `via role '${c.name}'`,
        },
      ])
      await store.roles.update(c.id, { is_active: false }, admin.id)
      expect((await store.roles.effectiveMembers(p.id)).map((m) => m.user_id)).toEqual([u1.id])
      const detail = await store.roles.get(p.id)
      expect(detail).toMatchObject({
        effective_member_count: 1,
        child_roles: [{ id: c.id, is_active: false }],
      })
    })

    it('deletes a role with every referencing row and one unassign entry per assignment', async () => {
      const [child, r, parent] = await chain(2)
      const target = r as Role
      const user = await store.users.create(
        { username: unique('del'), password: PASSWORD },
        admin.id,
      )
      await store.roles.addMembers((child as Role).id, { user_ids: [user.id] }, admin.id)
      const ds = await store.datasources.create(
        { name: unique('ds'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.access.setRoles(ds.id, { role_ids: [target.id] }, admin.id)
      const policy = await store.policies
        .create(
          {
            name: unique('p'),
            policy_type: 'table_deny',
            targets: [{ schemas: ['*'], tables: ['x'] }],
          },
          admin.id,
        )
        .catch(() => null)
      const a = policy
        ? await store.assignments.assign(
            ds.id,
            { policy_id: policy.id, role_id: target.id },
            admin.id,
          )
        : null
      const impact = await store.roles.impact(target.id)
      expect(impact).toMatchObject({
        affected_users: 1,
        affected_datasource_access: 1,
        affected_child_roles: 1,
      })
      const events = await captureChanges(store, async () =>
        expect(await store.roles.delete(target.id, admin.id)).toEqual(impact),
      )
      expect(events).toContainEqual({ type: 'user', userIds: [user.id], origin: 'local' })
      const [deleted] = await auditOf(store, target.id)
      expect(deleted?.changes.before).toMatchObject({
        member_user_ids: [],
        parent_role_ids: [(parent as Role).id],
        child_role_ids: [(child as Role).id],
        datasource_ids: [ds.id],
      })
      if (a) {
        const [unassign] = await auditOf(store, a.id)
        expect(unassign).toMatchObject({ action: 'unassign', resource_type: 'policy_assignment' })
        expect(unassign?.changes).toMatchObject({
          reason: 'role_deleted',
          role_id: target.id,
          scope: 'role',
        })
      }
      expect(await store.access.listRoles(ds.id)).toEqual([])
      expect((await store.roles.get((child as Role).id)).parent_roles).toEqual([])
    })
  })
}
