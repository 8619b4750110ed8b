import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { seedDemo } from '../../src/cli/demo-shop.js'
import { PASSWORD, setup, type TestContext } from './helpers.js'

let source: TestContext
let target: TestContext
const HOUR = new Date(Date.now() + 3600_000).toISOString()
const DAY = new Date(Date.now() + 86_400_000).toISOString()

const exportBundle = async (ctx: TestContext) =>
  parse(await (await ctx.call('GET', '/api/v1/policy-bundles')).text())
const apply = (ctx: TestContext, bundle: unknown) =>
  ctx.json('POST', '/api/v1/policy-bundles', { body: { bundle } })

beforeAll(async () => {
  source = await setup()
  target = await setup()
  const { store, admin } = source
  const shopId = (await seedDemo(store, admin.id, PASSWORD)).datasourceId
  const bob = (await store.users.findByUsername('bob')) as { id: string }
  const oncall = await store.roles.create({ name: 'oncall' }, admin.id)
  await store.roles.addMembers(oncall.id, { user_ids: [bob.id], valid_until: HOUR }, admin.id)
  await store.access.grant(shopId, { scope: 'role', id: oncall.id }, { valid_until: DAY }, admin.id)
  const policy = await store.policies.create(
    {
      name: 'freeze',
      policy_type: 'table_deny',
      targets: [{ schemas: ['*'], tables: ['orders'] }],
    },
    admin.id,
  )
  await store.assignments.assign(
    shopId,
    { policy_id: policy.id, role_id: oncall.id, valid_from: HOUR, valid_until: DAY },
    admin.id,
  )
})
afterAll(async () => {
  await source.close()
  await target.close()
})

describe('policy bundles with time-bound grants', () => {
  it('exports the windows of time-bound memberships, access rows and assignments only', async () => {
    const bundle = await exportBundle(source)
    const oncall = bundle.roles.find((r: { name: string }) => r.name === 'oncall')
    expect(oncall).toMatchObject({
      members: ['bob'],
      member_windows: { bob: { valid_until: HOUR } },
    })
    const shop = bundle.datasources[0]
    expect(shop.access.windows).toEqual({ roles: { oncall: { valid_until: DAY } } })
    expect(shop.assignments).toContainEqual({
      policy: 'freeze',
      scope: 'role',
      user: null,
      role: 'oncall',
      priority: 100,
      valid_from: HOUR,
      valid_until: DAY,
    })
    // Lasting grants carry no window fields at all.
    const lasting = shop.assignments.find((a: { policy: string }) => a.policy !== 'freeze')
    expect(Object.keys(lasting)).not.toContain('valid_until')
  })

  it('applies the windows to another store, which then exports the same bundle', async () => {
    const bundle = await exportBundle(source)
    expect((await apply(target, bundle)).status).toBe(200)
    expect(await exportBundle(target)).toEqual(bundle)
    const role = (await target.store.roles.list({ search: 'oncall' })).data[0] as { id: string }
    expect((await target.store.roles.get(role.id)).members[0]?.valid_until).toBe(HOUR)
    expect((await apply(target, bundle)).body.steps).toEqual([])
  })

  it('changes only a window when only the window changed, and can make a grant lasting', async () => {
    const bundle = await exportBundle(target)
    const oncall = bundle.roles.find((r: { name: string }) => r.name === 'oncall')
    oncall.member_windows = { bob: { valid_until: DAY } }
    delete bundle.datasources[0].access.windows
    const { body } = await apply(target, bundle)
    expect(body.steps).toEqual([
      { action: 'update', kind: 'role_member', name: 'oncall ← bob', fields: ['window'] },
      {
        action: 'update',
        kind: 'datasource_access',
        name: 'shop: role oncall',
        fields: ['window'],
      },
    ])
    const after = await exportBundle(target)
    expect(after.roles.find((r: { name: string }) => r.name === 'oncall').member_windows).toEqual({
      bob: { valid_until: DAY },
    })
    expect(after.datasources[0].access.windows).toBeUndefined()
  })

  it('refuses a window that has already ended, changing nothing', async () => {
    const before = await exportBundle(target)
    const bundle = structuredClone(before)
    bundle.roles.find((r: { name: string }) => r.name === 'oncall').member_windows = {
      bob: { valid_until: '2001-01-01T00:00:00Z' },
    }
    const { status, body } = await apply(target, bundle)
    expect(status).toBe(422)
    expect(body.error.details[0].field).toMatch(/^roles\[oncall\]\.members/)
    expect(await exportBundle(target)).toEqual(before)
  })
})
