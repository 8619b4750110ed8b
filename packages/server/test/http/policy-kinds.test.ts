import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedDemo } from '../../src/cli/demo-shop.js'
import { PASSWORD, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
let shopId: string
let alice: { id: string; username: string }

beforeAll(async () => {
  ctx = await setup()
  shopId = (await seedDemo(ctx.store, ctx.admin.id, PASSWORD)).datasourceId
  alice = (await ctx.store.users.findByUsername('alice')) as typeof alice
  await ctx.store.audit.queries.write({
    user_id: alice.id,
    username: alice.username,
    data_source_id: shopId,
    datasource_name: 'shop',
    original_query: 'SELECT count(*) FROM orders',
    status: 'success',
  })
  await ctx.store.audit.queries.flush()
})
afterAll(() => ctx.close())

const aggregation = (fields: Record<string, unknown> = {}) => ({
  name: unique('agg'),
  policy_type: 'aggregation',
  targets: [{ schemas: ['public'], tables: ['orders'] }],
  min_group_size: 3,
  ...fields,
})
const projection = (fields: Record<string, unknown> = {}) => ({
  name: unique('proj'),
  policy_type: 'projection',
  targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
  ...fields,
})

describe('aggregation and projection policies over the admin API', () => {
  it('creates, gets and updates an aggregation policy with its fields', async () => {
    const created = await ctx.json('POST', '/api/v1/policies', {
      body: aggregation({ allowed_aggregates: ['min', 'max'] }),
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      policy_type: 'aggregation',
      min_group_size: 3,
      allowed_aggregates: ['max', 'min'],
      targets: [{ schemas: ['public'], tables: ['orders'], columns: null }],
    })
    const got = await ctx.json('GET', `/api/v1/policies/${created.body.id}`)
    expect(got.body).toMatchObject({ min_group_size: 3, allowed_aggregates: ['max', 'min'] })
    const patched = await ctx.json('PATCH', `/api/v1/policies/${created.body.id}`, {
      body: { version: 1, min_group_size: 50 },
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ version: 2, min_group_size: 50 })
  })

  it('creates a projection policy, whose aggregation fields are null', async () => {
    const created = await ctx.json('POST', '/api/v1/policies', { body: projection() })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      policy_type: 'projection',
      min_group_size: null,
      allowed_aggregates: null,
      targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
    })
  })

  it('lists policies filtered by each new type', async () => {
    for (const type of ['aggregation', 'projection']) {
      const list = await ctx.json('GET', `/api/v1/policies?policy_type=${type}`)
      expect(list.status).toBe(200)
      expect(list.body.total).toBeGreaterThan(0)
      expect(list.body.data.every((p: { policy_type: string }) => p.policy_type === type)).toBe(
        true,
      )
    }
  })

  it.each([
    ['no min_group_size', aggregation({ min_group_size: null }), 'min_group_size', 'required'],
    ['a min_group_size of 1', aggregation({ min_group_size: 1 }), 'min_group_size', 'out_of_range'],
    [
      'an unknown aggregate',
      aggregation({ allowed_aggregates: ['first_value'] }),
      'allowed_aggregates[0]',
      'invalid_enum',
    ],
    [
      'columns on an aggregation target',
      aggregation({ targets: [{ schemas: ['public'], tables: ['orders'], columns: ['total'] }] }),
      'targets[0].columns',
      'not_allowed',
    ],
    [
      'a projection without columns',
      projection({ targets: [{ schemas: ['public'], tables: ['customers'] }] }),
      'targets[0].columns',
      'required',
    ],
    [
      'a group size on a projection',
      projection({ min_group_size: 3 }),
      'min_group_size',
      'not_allowed',
    ],
  ])('answers 422 validation_failed for %s', async (_name, body, field, code) => {
    const res = await ctx.json('POST', '/api/v1/policies', { body })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('validation_failed')
    expect(res.body.error.details).toContainEqual(expect.objectContaining({ field, code }))
  })

  it('describes both fields in the OpenAPI document, request and answer', async () => {
    const doc = (await ctx.json('GET', '/api/v1/openapi.json', { token: null })).body
    const text = JSON.stringify(doc)
    expect(text).toContain('"aggregation"')
    expect(text).toContain('"projection"')
    const post = doc.paths['/api/v1/policies'].post
    const body = JSON.stringify(post.requestBody)
    expect(body).toContain('min_group_size')
    expect(body).toContain('allowed_aggregates')
    // The bounds and the names a client may send are in the document.
    expect(body).toContain('"array_agg"')
    expect(body).not.toContain('"count"')
    expect(body).toMatch(/"minimum":2/)
    expect(JSON.stringify(post.responses['201'])).toContain('allowed_aggregates')
  })

  it('previews a statement for a user an aggregation and a projection policy apply to', async () => {
    const agg = await ctx.store.policies.create(aggregation() as never, ctx.admin.id)
    const proj = await ctx.store.policies.create(projection() as never, ctx.admin.id)
    const window = { valid_until: new Date(Date.now() + 3600_000).toISOString() }
    await ctx.store.assignments.assign(
      shopId,
      { policy_id: agg.id, user_id: alice.id, ...window },
      ctx.admin.id,
    )
    await ctx.store.assignments.assign(
      shopId,
      { policy_id: proj.id, user_id: alice.id },
      ctx.admin.id,
    )
    const { status, body } = await ctx.json('POST', '/api/v1/preview', {
      body: { datasource_id: shopId, user_id: alice.id, sql: 'SELECT count(*) FROM orders' },
    })
    expect(status).toBe(200)
    expect(body.user).toEqual({ id: alice.id, username: 'alice' })
    expect(body.statements).toHaveLength(1)
    const applied = body.statements[0].policies_applied.map((p: { name: string }) => p.name)
    expect(applied).toContain(agg.name)
    const table = (name: string) =>
      body.catalog[0].tables.find((t: { name: string }) => t.name === name)
    const namesOn = (name: string) => table(name).policies.map((p: { name: string }) => p.name)
    expect(namesOn('orders')).toContain(agg.name)
    expect(namesOn('customers')).toContain(proj.name)
    const effective = await ctx.json(
      'GET',
      `/api/v1/users/${alice.id}/effective-policies?datasource_id=${shopId}`,
    )
    expect(effective.status).toBe(200)
    const names = JSON.stringify(effective.body)
    expect(names).toContain(agg.name)
    expect(names).toContain(proj.name)
  })

  it('simulates creating an aggregation policy without keeping it', async () => {
    const before = (await ctx.store.policies.list({ policy_type: 'aggregation' })).total
    const name = unique('what-if-agg')
    const { status, body } = await ctx.json('POST', '/api/v1/simulations', {
      body: {
        datasource_id: shopId,
        changes: {
          create_policies: [{ ref: 'agg', ...aggregation({ name, min_group_size: 1000 }) }],
          assign: [{ policy_ref: 'agg', scope: 'all' }],
        },
      },
    })
    expect(status).toBe(200)
    expect(Array.isArray(body.queries)).toBe(true)
    expect((await ctx.store.policies.list({ policy_type: 'aggregation' })).total).toBe(before)
    const refused = await ctx.json('POST', '/api/v1/simulations', {
      body: {
        datasource_id: shopId,
        changes: { create_policies: [aggregation({ min_group_size: 1 })] },
      },
    })
    expect(refused.status).toBe(422)
    expect(JSON.stringify(refused.body.error.details)).toContain('min_group_size')
  })
})
