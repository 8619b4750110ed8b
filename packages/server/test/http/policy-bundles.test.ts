import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { seedDemo } from '../../src/cli/demo-shop.js'
import { PASSWORD, setup, type TestContext } from './helpers.js'

let source: TestContext
let target: TestContext

/** The demo's model plus a role hierarchy, a decision function and a role-scoped assignment. */
async function richModel(ctx: TestContext): Promise<void> {
  const shopId = (await seedDemo(ctx.store, ctx.admin.id, PASSWORD)).datasourceId
  const { store, admin } = ctx
  const alice = (await store.users.findByUsername('alice')) as { id: string }
  const analysts = await store.roles.create(
    { name: 'analysts', description: 'read the shop' },
    admin.id,
  )
  const staff = await store.roles.create({ name: 'staff' }, admin.id)
  await store.roles.addParent(analysts.id, { parent_role_id: staff.id }, admin.id)
  await store.roles.addMembers(analysts.id, { user_ids: [alice.id] }, admin.id)
  const fn = await store.decisionFunctions.create(
    {
      name: 'weekdays',
      decision_fn: 'function evaluate(ctx, config) { return { fire: config.on } }',
      decision_config: { on: true },
      evaluate_context: 'session',
    },
    admin.id,
  )
  const policy = await store.policies.create(
    {
      name: 'small orders',
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filter_expression: 'total < 50',
      decision_function_id: fn.id,
    },
    admin.id,
  )
  await store.assignments.assign(
    shopId,
    { policy_id: policy.id, scope: 'role', role_id: analysts.id, priority: 5 },
    admin.id,
  )
  await store.access.setRoles(shopId, { role_ids: [staff.id] }, admin.id)
}

const exportText = async (ctx: TestContext, query = '') => {
  const res = await ctx.call('GET', `/api/v1/policy-bundles${query}`)
  expect(res.status).toBe(200)
  return res.text()
}

const apply = (ctx: TestContext, bundle: unknown, dryRun = false) =>
  ctx.json('POST', '/api/v1/policy-bundles', { body: { bundle, dry_run: dryRun } })

beforeAll(async () => {
  source = await setup()
  await richModel(source)
  target = await setup()
})
afterAll(async () => {
  await source.close()
  await target.close()
})

describe('policy bundles', () => {
  it('exports names, never ids, passwords or versions, in a stable order', async () => {
    const text = await exportText(source)
    const bundle = parse(text)
    expect(bundle.version).toBe('palisade.policy-bundle/v1')
    expect(bundle.users.map((u: { username: string }) => u.username)).toEqual(['alice', 'bob'])
    expect(bundle.roles).toContainEqual({
      name: 'analysts',
      description: 'read the shop',
      is_active: true,
      members: ['alice'],
      parents: ['staff'],
    })
    const shop = bundle.datasources[0]
    expect(shop.access).toEqual({ all: false, users: ['alice', 'bob'], roles: ['staff'] })
    expect(shop.assignments).toContainEqual({
      policy: 'small orders',
      scope: 'role',
      user: null,
      role: 'analysts',
      priority: 5,
    })
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/)
    expect(text).not.toContain('password')
    expect(text).not.toContain('version: 1')
    expect(await exportText(source)).toBe(text)
    const json = JSON.parse(await exportText(source, '?format=json'))
    expect(json).toEqual(bundle)
  })

  it('applies to an empty store in one go, and exports the same bytes there', async () => {
    const text = await exportText(source)
    const { status, body } = await apply(target, parse(text))
    expect(status).toBe(200)
    expect(body.dry_run).toBe(false)
    expect(body.summary.create).toBeGreaterThan(10)
    expect(body.summary.delete).toBe(0)
    expect(await exportText(target)).toBe(text)
    // Every step is in the admin audit, by the admin who applied the bundle.
    const audit = await target.json('GET', '/api/v1/audit/admin?resource_type=policy&action=create')
    const changes = audit.body.data.map((e: { changes: string }) => e.changes).join('\n')
    expect(changes).toContain('"small orders"')
    expect(changes).toContain('"tenant-isolation"')
    expect(audit.body.data.every((e: { actor_id: string }) => e.actor_id === target.admin.id)).toBe(
      true,
    )
  })

  it('changes nothing when the same bundle is applied again', async () => {
    const { body } = await apply(target, parse(await exportText(source)))
    expect(body.steps).toEqual([])
  })

  it('plans a change with dry_run without making it, then makes it', async () => {
    const before = await exportText(target)
    const bundle = parse(before)
    const small = bundle.policies.find((p: { name: string }) => p.name === 'small orders')
    small.filter_expression = 'total < 20'
    bundle.roles = bundle.roles.filter((r: { name: string }) => r.name !== 'staff')
    for (const r of bundle.roles) r.parents = []
    bundle.datasources[0].access.roles = []
    const plan = await apply(target, bundle, true)
    expect(plan.status).toBe(200)
    expect(plan.body.dry_run).toBe(true)
    expect(plan.body.steps).toContainEqual({
      action: 'update',
      kind: 'policy',
      name: 'small orders',
      fields: ['filter_expression'],
    })
    expect(plan.body.steps).toContainEqual({ action: 'delete', kind: 'role', name: 'staff' })
    expect(await exportText(target)).toBe(before)
    const applied = await apply(target, bundle)
    expect(applied.body.steps).toEqual(plan.body.steps)
    const after = parse(await exportText(target))
    expect(after.roles.map((r: { name: string }) => r.name)).toEqual(['analysts'])
    expect(
      after.policies.find((p: { name: string }) => p.name === 'small orders').filter_expression,
    ).toBe('total < 20')
  })

  it('applies all or nothing: a refused step leaves the store as it was', async () => {
    const before = await exportText(target)
    const bundle = parse(before)
    bundle.roles.push({ name: 'auditors', members: [], parents: [] })
    bundle.policies.push({
      name: 'broken',
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filter_expression: 'total <',
    })
    const { status, body } = await apply(target, bundle)
    expect(status).toBe(422)
    expect(body.error.details[0].field).toMatch(/^policies\[broken\]\./)
    expect(await exportText(target)).toBe(before)
  })

  it('with versions, refuses to overwrite a policy changed since the export', async () => {
    const stale = parse(await exportText(target, '?versions=true'))
    const small = stale.policies.find((p: { name: string }) => p.name === 'small orders')
    expect(typeof small.version).toBe('number')
    const policy = (await target.store.policies.list({})).data.find(
      (p) => p.name === 'small orders',
    ) as { id: string; version: number }
    await target.store.policies.update(
      policy.id,
      { version: policy.version, description: 'changed by hand' },
      target.admin.id,
    )
    small.filter_expression = 'total < 5'
    const plan = await apply(target, stale, true)
    expect(plan.body.steps[0]).toEqual({
      action: 'conflict',
      kind: 'policy',
      name: 'small orders',
      fields: ['version'],
    })
    expect(plan.body.summary.conflict).toBe(1)
    const refused = await apply(target, stale)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('version_conflict')
    expect(refused.body.error.details[0].field).toBe('policies[small orders].version')
    const fresh = parse(await exportText(target, '?versions=true'))
    expect((await apply(target, fresh)).body.steps).toEqual([])
  })

  it('takes the bundle itself as the body, the dry run as a query parameter', async () => {
    const bundle = parse(await exportText(target))
    bundle.roles.push({ name: 'reviewers', members: ['bob'], parents: [] })
    const plan = await target.json('POST', '/api/v1/policy-bundles?dry_run=true', { body: bundle })
    expect(plan.status).toBe(200)
    expect(plan.body).toMatchObject({ dry_run: true, summary: { create: 2 } })
    expect((await target.store.roles.list({ search: 'reviewers' })).total).toBe(0)
  })

  it('refuses a bundle of another format', async () => {
    const { status, body } = await apply(target, { version: 'v0' })
    expect(status).toBe(422)
    expect(body.error.details[0].field).toBe('version')
  })
})

const url = process.env['PALISADE_TEST_PG_URL']

describe.skipIf(!url)('policy bundles between two PostgreSQL stores', () => {
  const names = [`palisade_bundle_a_${process.pid}`, `palisade_bundle_b_${process.pid}`]
  let admin: pg.Client
  let a: TestContext
  let b: TestContext

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url })
    await admin.connect()
    for (const name of names) await admin.query(`CREATE DATABASE ${name}`)
    const at = (name: string) => (url ?? '').replace(/\/[^/]*$/, `/${name}`)
    a = await setup({ databaseUrl: at(names[0] as string) })
    b = await setup({ databaseUrl: at(names[1] as string) })
    await richModel(a)
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    for (const name of names) await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin?.end()
  })

  it('round-trips byte for byte and applies only once', async () => {
    const text = await exportText(a)
    const first = await apply(b, parse(text))
    expect(first.status).toBe(200)
    expect(first.body.summary.create).toBeGreaterThan(10)
    expect(await exportText(b)).toBe(text)
    expect((await apply(b, parse(text))).body.steps).toEqual([])
    expect((await b.json('GET', '/api/v1/audit/verify')).body.ok).toBe(true)
  })
})
