import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { seedDemo } from '../../src/cli/demo-shop.js'
import { PASSWORD, setup, type TestContext } from './helpers.js'

let source: TestContext
let target: TestContext
let bare: TestContext
let shopId: string

const exportBundle = async (ctx: TestContext) =>
  parse(await (await ctx.call('GET', '/api/v1/policy-bundles')).text())
const apply = (ctx: TestContext, bundle: unknown) =>
  ctx.json('POST', '/api/v1/policy-bundles', { body: { bundle } })

beforeAll(async () => {
  ;[source, target, bare] = await Promise.all([setup(), setup(), setup()])
  shopId = (await seedDemo(source.store, source.admin.id, PASSWORD)).datasourceId
  await seedDemo(target.store, target.admin.id, PASSWORD)
  const tag = (table: string, column: string | null, tags: string[]) =>
    source.json('PUT', `/api/v1/datasources/${shopId}/tags`, {
      body: { schema_name: 'public', table_name: table, column_name: column, tags },
    })
  expect((await tag('customers', 'email', ['pii.email'])).status).toBe(200)
  await tag('orders', null, ['finance'])
  await source.json('POST', '/api/v1/policies', {
    body: {
      name: 'mask-pii',
      policy_type: 'column_mask',
      targets: [{ tags: ['pii'] }],
      mask_expression: "'***'",
    },
  })
})
afterAll(async () => {
  for (const ctx of [source, target, bare]) await ctx.close()
})

describe('policy bundles with catalog tags and tag targets', () => {
  it('exports the tagged objects and tag targets', async () => {
    const bundle = await exportBundle(source)
    expect(bundle.datasources[0].tags).toEqual([
      { schema: 'public', table: 'customers', column: 'email', tags: ['pii.email'] },
      { schema: 'public', table: 'orders', column: null, tags: ['finance'] },
    ])
    const policy = bundle.policies.find((p: { name: string }) => p.name === 'mask-pii')
    expect(policy.targets).toEqual([
      { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii'] },
    ])
  })

  it('applies tags to a store whose catalog holds the objects, and removes the others', async () => {
    const bundle = await exportBundle(source)
    const first = await apply(target, bundle)
    expect(first.status).toBe(200)
    expect(first.body.steps).toContainEqual({
      action: 'update',
      kind: 'catalog_tag',
      name: 'shop: public.customers.email',
      fields: ['tags'],
    })
    expect(await exportBundle(target)).toEqual(bundle)
    bundle.datasources[0].tags = bundle.datasources[0].tags.filter(
      (t: { table: string }) => t.table !== 'orders',
    )
    const second = await apply(target, bundle)
    expect(second.body.steps).toEqual([
      { action: 'update', kind: 'catalog_tag', name: 'shop: public.orders', fields: ['tags'] },
    ])
    const ds = (await target.store.datasources.list({})).data[0] as { id: string }
    expect((await target.json('GET', `/api/v1/datasources/${ds.id}/tags`)).body).toEqual([
      { schema_name: 'public', table_name: 'customers', column_name: 'email', tags: ['pii.email'] },
    ])
  })

  it('leaves tags of objects a new datasource has not discovered yet for a later apply', async () => {
    const { status } = await apply(bare, await exportBundle(source))
    expect(status).toBe(200)
    const ds = (await bare.store.datasources.list({})).data[0] as { id: string }
    expect((await bare.json('GET', `/api/v1/datasources/${ds.id}/tags`)).body).toEqual([])
  })
})
