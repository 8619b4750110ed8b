import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, Store, User } from '../../src/index.js'
import { auditOf, bootstrapAdmin, expectNoAudit, PASSWORD, unique } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const aggregation = (fields: Record<string, unknown> = {}) => ({
  name: unique('agg'),
  policy_type: 'aggregation',
  targets: [{ schemas: ['public'], tables: ['salaries'] }],
  min_group_size: 5,
  ...fields,
})

const projection = (fields: Record<string, unknown> = {}) => ({
  name: unique('proj'),
  policy_type: 'projection',
  targets: [{ schemas: ['public'], tables: ['patients'], columns: ['diagnosis'] }],
  ...fields,
})

/** The aggregation and projection policy types through the store (docs/policies.md#aggregation). */
export function policyKindsCases(makeStore: MakeStore): void {
  describe('aggregation and projection policies', () => {
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

    it('saves an aggregation policy with its group size and sorted allowed aggregates', async () => {
      const policy = await store.policies.create(
        aggregation({ allowed_aggregates: ['max', 'array_agg', 'min'] }),
        admin.id,
      )
      expect(policy).toMatchObject({
        policy_type: 'aggregation',
        min_group_size: 5,
        allowed_aggregates: ['array_agg', 'max', 'min'],
        filter_expression: null,
        mask_expression: null,
      })
      expect(policy.targets).toEqual([{ schemas: ['public'], tables: ['salaries'], columns: null }])
      expect(await store.policies.get(policy.id)).toMatchObject({
        min_group_size: 5,
        allowed_aggregates: ['array_agg', 'max', 'min'],
      })
      expect(await store.policies.getVersion(policy.id, 1)).toMatchObject({
        min_group_size: 5,
        allowed_aggregates: ['array_agg', 'max', 'min'],
      })
      const [entry] = await auditOf(store, policy.id)
      expect(entry?.changes.after).toMatchObject({ min_group_size: 5 })
    })

    it('stores no allowed aggregates as an empty list, and null on other types', async () => {
      const agg = await store.policies.create(aggregation(), admin.id)
      expect(agg.allowed_aggregates).toEqual([])
      const proj = await store.policies.create(projection(), admin.id)
      expect(proj).toMatchObject({
        policy_type: 'projection',
        min_group_size: null,
        allowed_aggregates: null,
      })
      expect(proj.targets).toEqual([
        { schemas: ['public'], tables: ['patients'], columns: ['diagnosis'] },
      ])
    })

    it('lists policies filtered by the new types', async () => {
      const agg = await store.policies.create(aggregation(), admin.id)
      const page = await store.policies.list({ policy_type: 'aggregation', page_size: 100 })
      expect(page.data.every((p) => p.policy_type === 'aggregation')).toBe(true)
      expect(page.data.find((p) => p.id === agg.id)).toMatchObject({ min_group_size: 5 })
      const projections = await store.policies.list({ policy_type: 'projection', page_size: 100 })
      expect(projections.total).toBeGreaterThan(0)
      expect(projections.data.every((p) => p.policy_type === 'projection')).toBe(true)
    })

    it('updates the group size and allowed aggregates, with a snapshot per version', async () => {
      const policy = await store.policies.create(aggregation(), admin.id)
      const updated = await store.policies.update(
        policy.id,
        { version: 1, min_group_size: 20, allowed_aggregates: ['max'] },
        admin.id,
      )
      expect(updated).toMatchObject({ version: 2, min_group_size: 20, allowed_aggregates: ['max'] })
      expect(await store.policies.getVersion(policy.id, 1)).toMatchObject({ min_group_size: 5 })
      expect(await store.policies.getVersion(policy.id, 2)).toMatchObject({
        min_group_size: 20,
        allowed_aggregates: ['max'],
      })
      const [entry] = await auditOf(store, policy.id)
      expect(entry?.changes).toMatchObject({
        before: { min_group_size: 5, allowed_aggregates: [] },
        after: { min_group_size: 20, allowed_aggregates: ['max'] },
      })
    })

    it('drops the aggregation fields when the type changes away from aggregation', async () => {
      const policy = await store.policies.create(
        aggregation({ allowed_aggregates: ['min'] }),
        admin.id,
      )
      const denied = await store.policies.update(
        policy.id,
        { version: 1, policy_type: 'table_deny' },
        admin.id,
      )
      expect(denied).toMatchObject({
        policy_type: 'table_deny',
        min_group_size: null,
        allowed_aggregates: null,
      })
      // Back to aggregation: the group size must be given again.
      const error = await expectNoAudit(store, () =>
        store.policies.update(policy.id, { version: 2, policy_type: 'aggregation' }, admin.id),
      )
      expect(error.details).toContainEqual(
        expect.objectContaining({ field: 'min_group_size', code: 'required' }),
      )
    })

    it.each([
      [
        'aggregation without min_group_size',
        aggregation({ min_group_size: undefined }),
        'min_group_size',
        'required',
      ],
      ['min_group_size 1', aggregation({ min_group_size: 1 }), 'min_group_size', 'out_of_range'],
      [
        'min_group_size 1,000,001',
        aggregation({ min_group_size: 1_000_001 }),
        'min_group_size',
        'out_of_range',
      ],
      [
        'a fractional min_group_size',
        aggregation({ min_group_size: 3.5 }),
        'min_group_size',
        'out_of_range',
      ],
      [
        'a string min_group_size',
        aggregation({ min_group_size: '5' }),
        'min_group_size',
        'invalid_type',
      ],
      [
        'aggregation with columns',
        aggregation({ targets: [{ schemas: ['public'], tables: ['salaries'], columns: ['pay'] }] }),
        'targets[0].columns',
        'not_allowed',
      ],
      [
        'aggregation with a filter',
        aggregation({ filter_expression: 'true' }),
        'filter_expression',
        'not_allowed',
      ],
      [
        'an unknown aggregate',
        aggregation({ allowed_aggregates: ['median'] }),
        'allowed_aggregates[0]',
        'invalid_enum',
      ],
      [
        'a statistic aggregate',
        aggregation({ allowed_aggregates: ['min', 'count'] }),
        'allowed_aggregates[1]',
        'invalid_enum',
      ],
      [
        'more than 40 aggregates',
        aggregation({ allowed_aggregates: Array.from({ length: 41 }, () => 'min') }),
        'allowed_aggregates',
        'too_long',
      ],
      [
        'projection without columns',
        projection({ targets: [{ schemas: ['public'], tables: ['patients'] }] }),
        'targets[0].columns',
        'required',
      ],
      [
        'projection with a mask',
        projection({ mask_expression: "'x'" }),
        'mask_expression',
        'not_allowed',
      ],
      [
        'projection with min_group_size',
        projection({ min_group_size: 5 }),
        'min_group_size',
        'not_allowed',
      ],
      [
        'row_filter with allowed_aggregates',
        {
          name: unique('rf'),
          policy_type: 'row_filter',
          targets: [{ schemas: ['*'], tables: ['*'] }],
          filter_expression: 'true',
          allowed_aggregates: ['min'],
        },
        'allowed_aggregates',
        'not_allowed',
      ],
    ])('rejects %s with 422 naming the field', async (_n, body, field, code) => {
      const error = await expectNoAudit(store, () => store.policies.create(body as never, admin.id))
      expect([error.status, error.code]).toEqual([422, 'validation_failed'])
      expect(error.details).toContainEqual(expect.objectContaining({ field, code }))
    })

    it('names the refused aggregate in the message, and says a statistic is always allowed', async () => {
      const error = await expectNoAudit(store, () =>
        store.policies.create(
          aggregation({ allowed_aggregates: ['median', 'count', 'min', 'min'] }) as never,
          admin.id,
        ),
      )
      expect(error.details).toEqual([
        expect.objectContaining({
          field: 'allowed_aggregates[0]',
          message: expect.stringMatching(/median, which is not a value-revealing aggregate/),
        }),
        expect.objectContaining({
          field: 'allowed_aggregates[1]',
          message: expect.stringMatching(/count, a statistic .* always allowed/),
        }),
      ])
      const repeated = await expectNoAudit(store, () =>
        store.policies.create(
          aggregation({ allowed_aggregates: ['min', 'min'] }) as never,
          admin.id,
        ),
      )
      expect(repeated.details).toEqual([
        expect.objectContaining({ field: 'allowed_aggregates[1]', code: 'duplicate' }),
      ])
    })

    it('hands a session the group size and allowed aggregates, and a shadow projection as shadow', async () => {
      const user = await store.users.create(
        { username: unique('kind'), password: PASSWORD },
        admin.id,
      )
      await store.access.setUsers(ds.id, { user_ids: [user.id] }, admin.id)
      const agg = await store.policies.create(
        aggregation({ min_group_size: 7, allowed_aggregates: ['max'] }),
        admin.id,
      )
      const proj = await store.policies.create(projection({ enforcement: 'shadow' }), admin.id)
      await store.assignments.assign(ds.id, { policy_id: agg.id, user_id: user.id }, admin.id)
      await store.assignments.assign(ds.id, { policy_id: proj.id, user_id: user.id }, admin.id)
      const input = await store.buildSessionInput(user.username, ds.name)
      expect(input.policies.find((p) => p.id === agg.id)).toMatchObject({
        type: 'aggregation',
        minGroupSize: 7,
        allowedAggregates: ['max'],
        targets: [{ schemas: ['public'], tables: ['salaries'], columns: null }],
      })
      expect(input.policies.find((p) => p.id === proj.id)).toMatchObject({
        type: 'projection',
        enforcement: 'shadow',
        targets: [{ schemas: ['public'], tables: ['patients'], columns: ['diagnosis'] }],
      })
    })
  })
}
