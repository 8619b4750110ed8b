import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, Store, User } from '../../src/index.js'
import {
  auditOf,
  bootstrapAdmin,
  captureChanges,
  expectNoAudit,
  PASSWORD,
  unique,
} from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const rowFilter = (name = unique('pol')) => ({
  name,
  policy_type: 'row_filter',
  targets: [{ schemas: ['public'], tables: ['orders'] }],
  filter_expression: 'tenant_id = {user.tenant}',
})

const FN =
  'function evaluate(ctx, config) { return { fire: ctx.session.user.roles.includes("x") } }'

/** Policies, versions, assignments and decision functions (docs/resources.md#policies, 10, 13). */
export function policiesCases(makeStore: MakeStore, options: { realConcurrency: boolean }): void {
  describe('policies, assignments and decision functions', () => {
    let store: Store
    let admin: User
    let ds: Datasource
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
      ds = await store.datasources.create(
        { name: unique('ds'), ds_type: 'pglite', config: {} },
        admin.id,
      )
    })
    afterAll(() => store.close())

    it('creates a policy at version 1 and audits every stored field', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      expect(policy).toMatchObject({
        version: 1,
        is_enabled: true,
        assignment_count: 0,
        decision_function: null,
      })
      expect(policy.targets).toEqual([{ schemas: ['public'], tables: ['orders'], columns: null }])
      const [entry] = await auditOf(store, policy.id)
      expect(entry?.changes.after).toMatchObject({
        filter_expression: 'tenant_id = {user.tenant}',
        version: 1,
      })
      expect(await store.policies.getVersion(policy.id, 1)).toMatchObject({
        name: policy.name,
        version: 1,
      })
    })

    it.each([
      [
        'column_mask without mask_expression',
        {
          policy_type: 'column_mask',
          filter_expression: null,
          targets: [{ schemas: ['*'], tables: ['*'], columns: ['c'] }],
        },
        'required',
      ],
      [
        'table_deny with columns',
        {
          policy_type: 'table_deny',
          filter_expression: null,
          targets: [{ schemas: ['*'], tables: ['*'], columns: [] }],
        },
        'not_allowed',
      ],
      [
        'column_allow without columns',
        { policy_type: 'column_allow', filter_expression: null },
        'required',
      ],
      ['row_filter without a filter', { filter_expression: null }, 'required'],
    ])('rejects %s with 422 validation_failed', async (_n, patch, code) => {
      const error = await expectNoAudit(store, () =>
        store.policies.create({ ...rowFilter(), ...patch } as never, admin.id),
      )
      expect([error.status, error.code]).toEqual([422, 'validation_failed'])
      expect(error.details.map((d) => d.code)).toContain(code)
    })

    it.each([
      ['an empty targets array', { targets: [] }, 'targets'],
      ['an oversized name', { name: 'n'.repeat(101) }, 'name'],
      ['a name with a slash', { name: 'a/b' }, 'name'],
      ['an unknown type', { policy_type: 'allow_all' }, 'policy_type'],
      [
        'a control character in a pattern',
        { targets: [{ schemas: ['a\u0001'], tables: ['t'] }] },
        'targets[0].schemas[0]',
      ],
    ])('rejects %s with 422 naming the field', async (_n, patch, field) => {
      const error = await expectNoAudit(store, () =>
        store.policies.create({ ...rowFilter(), ...patch } as never, admin.id),
      )
      expect(error.status).toBe(422)
      expect(error.details.map((d) => d.field)).toContain(field)
    })

    it('rejects an expression that does not parse with 422 invalid_expression', async () => {
      const error = await expectNoAudit(store, () =>
        store.policies.create(
          { ...rowFilter(), filter_expression: 'tenant_id = (SELECT 1)' },
          admin.id,
        ),
      )
      expect([error.status, error.code, error.details[0]?.code]).toEqual([
        422,
        'invalid_expression',
        'parse_error',
      ])
    })

    it('rejects an unknown decision function with 422 not_found', async () => {
      const error = await expectNoAudit(store, () =>
        store.policies.create(
          { ...rowFilter(), decision_function_id: '0190f000-0000-7000-8000-000000000005' },
          admin.id,
        ),
      )
      expect([error.status, error.details[0]?.code]).toEqual([422, 'not_found'])
    })

    it('accepts the definition form and rejects conflicting values', async () => {
      const { filter_expression, ...rest } = rowFilter()
      const p = await store.policies.create(
        { ...rest, definition: { filter_expression } },
        admin.id,
      )
      expect(p.filter_expression).toBe(filter_expression)
      const error = await expectNoAudit(store, () =>
        store.policies.create(
          { ...rowFilter(), definition: { filter_expression: 'a = 1' } },
          admin.id,
        ),
      )
      expect(error.status).toBe(422)
    })

    it('increments the version on every accepted update and keeps a snapshot per version', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      await store.assignments.assign(ds.id, { policy_id: policy.id }, admin.id)
      const events = await captureChanges(store, () =>
        store.policies.update(policy.id, { version: 1, is_enabled: false }, admin.id),
      )
      expect(events).toEqual([{ type: 'ds', datasourceId: ds.id, origin: 'local' }])
      const v3 = await store.policies.update(policy.id, { version: 2 }, admin.id)
      expect(v3.version).toBe(3)
      expect(v3.assignments).toHaveLength(1)
      const [entry] = await auditOf(store, policy.id)
      expect(entry?.changes).toEqual({ before: { version: 2 }, after: { version: 3 } })
      expect(await store.policies.getVersion(policy.id, 2)).toMatchObject({
        is_enabled: false,
        version: 2,
      })
      const conflict = await expectNoAudit(store, () =>
        store.policies.update(policy.id, { version: 1, name: 'x' }, admin.id),
      )
      expect([conflict.status, conflict.code, conflict.details[0]?.message]).toEqual([
        409,
        'version_conflict',
        'current version is 3',
      ])
      const missing = await expectNoAudit(store, () =>
        store.policies.update(policy.id, { name: 'x' } as never, admin.id),
      )
      expect(missing.details).toContainEqual(
        expect.objectContaining({ field: 'version', code: 'required' }),
      )
    })

    it('drops fields the new type forbids when the type changes', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      const updated = await store.policies.update(
        policy.id,
        { version: 1, policy_type: 'table_deny' },
        admin.id,
      )
      expect(updated).toMatchObject({
        policy_type: 'table_deny',
        filter_expression: null,
        version: 2,
      })
      const error = await expectNoAudit(store, () =>
        store.policies.update(policy.id, { version: 2, policy_type: 'column_allow' }, admin.id),
      )
      expect(error.code).toBe('validation_failed')
    })

    it('lets exactly one of two concurrent updates with the same version win', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      const rounds = options.realConcurrency ? 5 : 1
      for (let round = 0; round < rounds; round++) {
        const version = round + 1
        const results = await Promise.allSettled([
          store.policies.update(policy.id, { version, description: `a${round}` }, admin.id),
          store.policies.update(policy.id, { version, description: `b${round}` }, admin.id),
        ])
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
        expect(lost.reason.code).toBe('version_conflict')
      }
      expect((await store.policies.get(policy.id)).version).toBe(rounds + 1)
      const updates = (await auditOf(store, policy.id)).filter((e) => e.action === 'update')
      expect(updates).toHaveLength(rounds)
    })

    it('deletes a policy with one unassign per assignment', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      const a = await store.assignments.assign(
        ds.id,
        { policy_id: policy.id, priority: 5 },
        admin.id,
      )
      await store.policies.delete(policy.id, admin.id)
      const [unassign] = await auditOf(store, a.id)
      expect(unassign?.changes).toEqual({
        assignment_id: a.id,
        policy_id: policy.id,
        datasource_id: ds.id,
        scope: 'all',
        user_id: null,
        role_id: null,
        priority: 5,
        reason: 'policy_deleted',
      })
      expect(await store.policies.getVersion(policy.id, 1)).not.toBeNull()
      expect((await expectNoAudit(store, () => store.policies.get(policy.id))).status).toBe(404)
    })

    it('deletes a datasource with one unassign per assignment, reason datasource_deleted', async () => {
      const other = await store.datasources.create(
        { name: unique('gone'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const policy = await store.policies.create(rowFilter(), admin.id)
      const a = await store.assignments.assign(other.id, { policy_id: policy.id }, admin.id)
      const events = await captureChanges(store, () => store.datasources.delete(other.id, admin.id))
      expect(events).toContainEqual({ type: 'ds', datasourceId: other.id, origin: 'local' })
      const [unassign] = await auditOf(store, a.id)
      expect(unassign?.changes).toMatchObject({
        reason: 'datasource_deleted',
        datasource_id: other.id,
      })
      const [deleted] = await auditOf(store, other.id)
      expect([deleted?.action, deleted?.changes.before.name]).toEqual(['delete', other.name])
      expect((await store.policies.get(policy.id)).assignment_count).toBe(0)
    })

    it.each([
      ['user scope without user_id', { scope: 'user' }],
      [
        'role scope with a user_id',
        { scope: 'role', user_id: '0190f000-0000-7000-8000-000000000006' },
      ],
      [
        'all scope with a role_id',
        { scope: 'all', role_id: '0190f000-0000-7000-8000-000000000006' },
      ],
      [
        'both ids',
        {
          user_id: '0190f000-0000-7000-8000-000000000006',
          role_id: '0190f000-0000-7000-8000-000000000006',
        },
      ],
      ['an unknown scope', { scope: 'group' }],
    ])('rejects an assignment with %s as 400 scope_mismatch', async (_n, patch) => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      const error = await expectNoAudit(store, () =>
        store.assignments.assign(ds.id, { policy_id: policy.id, ...patch }, admin.id),
      )
      expect([error.status, error.code]).toEqual([400, 'scope_mismatch'])
    })

    it('assigns with default priority 100, infers the scope and refuses duplicates', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      const user = await store.users.create(
        { username: unique('as'), password: PASSWORD },
        admin.id,
      )
      const events = await captureChanges(store, async () => {
        const a = await store.assignments.assign(
          ds.id,
          { policy_id: policy.id, user_id: user.id },
          admin.id,
        )
        expect(a).toMatchObject({
          scope: 'user',
          priority: 100,
          username: user.username,
          role_id: null,
          policy_name: policy.name,
        })
      })
      expect(events).toEqual([
        { type: 'ds_users', datasourceId: ds.id, userIds: [user.id], origin: 'local' },
      ])
      const dup = await expectNoAudit(store, () =>
        store.assignments.assign(
          ds.id,
          { policy_id: policy.id, scope: 'user', user_id: user.id },
          admin.id,
        ),
      )
      expect([dup.status, dup.code]).toEqual([409, 'already_exists'])
      expect((await store.policies.get(policy.id)).version).toBe(1)
    })

    it('validates priority bounds and referenced ids', async () => {
      const policy = await store.policies.create(rowFilter(), admin.id)
      for (const priority of [-1, 1_000_001, 1.5]) {
        const error = await expectNoAudit(store, () =>
          store.assignments.assign(ds.id, { policy_id: policy.id, priority }, admin.id),
        )
        expect([error.status, error.details[0]?.field]).toEqual([422, 'priority'])
      }
      await store.assignments.assign(ds.id, { policy_id: policy.id, priority: 1_000_000 }, admin.id)
      const unknown = '0190f000-0000-7000-8000-000000000007'
      for (const [body, field] of [
        [{ policy_id: unknown }, 'policy_id'],
        [{ policy_id: policy.id, user_id: unknown }, 'user_id'],
        [{ policy_id: policy.id, role_id: unknown }, 'role_id'],
      ] as const) {
        const error = await expectNoAudit(store, () =>
          store.assignments.assign(ds.id, body, admin.id),
        )
        expect([error.status, error.details[0]?.field]).toEqual([404, field])
      }
      const other = await store.datasources.create(
        { name: unique('o'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const [a] = await store.assignments.list(ds.id)
      const error = await expectNoAudit(store, () =>
        store.assignments.unassign(other.id, (a as { id: string }).id, admin.id),
      )
      expect(error.status).toBe(404)
    })

    it('compiles a decision function at save and reports compile errors as 422', async () => {
      const fn = await store.decisionFunctions.create(
        { name: unique('fn'), decision_fn: FN, evaluate_context: 'session' },
        admin.id,
      )
      expect(fn).toMatchObject({
        version: 1,
        on_error: 'deny',
        log_level: 'off',
        is_enabled: true,
        decision_config: {},
      })
      expect(fn.module_size_bytes).toBeGreaterThan(0)
      const [entry] = await auditOf(store, fn.id)
      expect(entry?.changes.after).not.toHaveProperty('decision_fn')
      const error = await expectNoAudit(store, () =>
        store.decisionFunctions.create(
          { name: unique('fn'), decision_fn: 'function evaluate( {', evaluate_context: 'query' },
          admin.id,
        ),
      )
      expect([error.status, error.code]).toEqual([422, 'compile_failed'])
      const bad = await expectNoAudit(store, () =>
        store.decisionFunctions.create(
          { name: unique('fn'), decision_fn: FN, evaluate_context: 'always' },
          admin.id,
        ),
      )
      expect([bad.status, bad.code]).toEqual([422, 'validation_failed'])
    })

    it('updates a decision function by version with decision_fn_changed and blocks delete while used', async () => {
      const fn = await store.decisionFunctions.create(
        { name: unique('fn'), decision_fn: FN, evaluate_context: 'session' },
        admin.id,
      )
      const policy = await store.policies.create(
        { ...rowFilter(), decision_function_id: fn.id },
        admin.id,
      )
      expect(policy.decision_function).toMatchObject({ id: fn.id, evaluate_context: 'session' })
      await store.assignments.assign(ds.id, { policy_id: policy.id }, admin.id)
      const events = await captureChanges(store, () =>
        store.decisionFunctions.update(fn.id, { version: 1, decision_fn: `${FN}\n` }, admin.id),
      )
      expect(events).toEqual([{ type: 'ds', datasourceId: ds.id, origin: 'local' }])
      const [entry] = await auditOf(store, fn.id)
      expect(entry?.changes).toEqual({
        before: { version: 1 },
        after: { version: 2 },
        decision_fn_changed: true,
      })
      const conflict = await expectNoAudit(store, () =>
        store.decisionFunctions.update(fn.id, { version: 1 }, admin.id),
      )
      expect(conflict.code).toBe('version_conflict')
      const used = await expectNoAudit(store, () => store.decisionFunctions.delete(fn.id, admin.id))
      expect([used.status, used.code]).toEqual([409, 'in_use'])
      await store.policies.update(policy.id, { version: 1, decision_function_id: null }, admin.id)
      await store.decisionFunctions.delete(fn.id, admin.id)
    })

    it('validates an expression without side effects and lists undefined attributes', async () => {
      const result = await store.policies.validateExpression({
        expression: 'region = {user.region} AND id = {user.id}',
      })
      expect(result).toEqual({
        valid: true,
        variables: expect.arrayContaining(['region', 'id']),
        undefined_attributes: ['region'],
      })
      const bad = await store.policies.validateExpression({ expression: 'a = (' })
      expect(bad.valid).toBe(false)
    })
  })
}
