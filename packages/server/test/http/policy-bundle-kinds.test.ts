import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { seedDemo } from '../../src/cli/demo-shop.js'
import { PASSWORD, setup, type TestContext } from './helpers.js'

let source: TestContext
let target: TestContext
const DAY = new Date(Date.now() + 86_400_000).toISOString()

const exportText = async (ctx: TestContext) =>
  (await ctx.call('GET', '/api/v1/policy-bundles')).text()
const apply = (ctx: TestContext, bundle: unknown, dryRun = false) =>
  ctx.json('POST', '/api/v1/policy-bundles', { body: { bundle, dry_run: dryRun } })
const named = (bundle: { policies: { name: string }[] }, name: string) =>
  bundle.policies.find((p) => p.name === name) as Record<string, unknown>

beforeAll(async () => {
  source = await setup()
  target = await setup()
  const { store, admin } = source
  const shopId = (await seedDemo(store, admin.id, PASSWORD)).datasourceId
  const totals = await store.policies.create(
    {
      name: 'order totals only',
      policy_type: 'aggregation',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      min_group_size: 5,
      allowed_aggregates: ['max', 'min'],
    },
    admin.id,
  )
  await store.policies.create(
    {
      name: 'no customer emails out',
      policy_type: 'projection',
      targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
      enforcement: 'shadow',
    },
    admin.id,
  )
  await store.assignments.assign(
    shopId,
    { policy_id: totals.id, priority: 7, valid_until: DAY },
    admin.id,
  )
})
afterAll(async () => {
  await source.close()
  await target.close()
})

describe('policy bundles with aggregation and projection policies', () => {
  it('exports min_group_size and allowed_aggregates on aggregation policies only', async () => {
    const bundle = parse(await exportText(source))
    expect(named(bundle, 'order totals only')).toEqual({
      name: 'order totals only',
      description: null,
      policy_type: 'aggregation',
      targets: [{ schemas: ['public'], tables: ['orders'], columns: null }],
      filter_expression: null,
      mask_expression: null,
      min_group_size: 5,
      allowed_aggregates: ['max', 'min'],
      decision_function: null,
      is_enabled: true,
      enforcement: 'enforce',
    })
    const projection = named(bundle, 'no customer emails out')
    expect(projection).toMatchObject({ policy_type: 'projection', enforcement: 'shadow' })
    expect(projection).not.toHaveProperty('min_group_size')
    expect(projection).not.toHaveProperty('allowed_aggregates')
    expect(bundle.datasources[0].assignments).toContainEqual(
      expect.objectContaining({ policy: 'order totals only', priority: 7, valid_until: DAY }),
    )
  })

  it('round-trips: applied to an empty store it exports the same bytes, and again changes nothing', async () => {
    const text = await exportText(source)
    const first = await apply(target, parse(text))
    expect(first.status).toBe(200)
    expect(await exportText(target)).toBe(text)
    expect((await apply(target, parse(text))).body.steps).toEqual([])
    const list = await target.json('GET', '/api/v1/policies?policy_type=aggregation')
    expect(list.body.data).toEqual([
      expect.objectContaining({ min_group_size: 5, allowed_aggregates: ['max', 'min'] }),
    ])
  })

  it('updates the group size and allowed aggregates a bundle changes, in any order', async () => {
    const bundle = parse(await exportText(target))
    Object.assign(named(bundle, 'order totals only'), {
      min_group_size: 10,
      allowed_aggregates: ['min', 'array_agg'],
    })
    const { body } = await apply(target, bundle)
    expect(body.steps).toEqual([
      {
        action: 'update',
        kind: 'policy',
        name: 'order totals only',
        fields: ['min_group_size', 'allowed_aggregates'],
      },
    ])
    expect(named(parse(await exportText(target)), 'order totals only')).toMatchObject({
      min_group_size: 10,
      allowed_aggregates: ['array_agg', 'min'],
    })
    expect((await apply(target, bundle)).body.steps).toEqual([])
  })

  it('drops the aggregation fields when a bundle changes the type', async () => {
    const bundle = parse(await exportText(target))
    const policy = named(bundle, 'order totals only')
    policy['policy_type'] = 'table_deny'
    delete policy['min_group_size']
    delete policy['allowed_aggregates']
    const { status, body } = await apply(target, bundle)
    expect(status).toBe(200)
    expect(body.steps).toEqual([
      { action: 'update', kind: 'policy', name: 'order totals only', fields: ['policy_type'] },
    ])
    const after = named(parse(await exportText(target)), 'order totals only')
    expect(after['policy_type']).toBe('table_deny')
    expect(after).not.toHaveProperty('min_group_size')
  })

  it('refuses an aggregation policy without a group size, naming the policy and field', async () => {
    const bundle = parse(await exportText(target))
    bundle.policies.push({
      name: 'bad aggregation',
      policy_type: 'aggregation',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      allowed_aggregates: ['max'],
    })
    const { status, body } = await apply(target, bundle)
    expect(status).toBe(422)
    expect(body.error.details).toContainEqual(
      expect.objectContaining({
        field: 'policies[bad aggregation].min_group_size',
        code: 'required',
      }),
    )
    bundle.policies.at(-1).min_group_size = 5
    bundle.policies.at(-1).allowed_aggregates = ['count']
    const statistic = await apply(target, bundle)
    expect(statistic.status).toBe(422)
    expect(statistic.body.error.details).toContainEqual(
      expect.objectContaining({
        field: 'policies[bad aggregation].allowed_aggregates[0]',
        code: 'invalid_enum',
      }),
    )
  })
})
