import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedDemo } from '../../src/cli/demo-shop.js'
import { PASSWORD, setup, type TestContext } from './helpers.js'

let ctx: TestContext
let shopId: string
let alice: { id: string; username: string }
let bob: { id: string; username: string }

/** Statements alice and bob "ran": the window a simulation replays. */
const ALICE_RAN = [
  'SELECT id, email FROM customers ORDER BY id',
  'SELECT * FROM customers',
  'SELECT name FROM tenants',
  'SELECT id, total FROM orders',
]

beforeAll(async () => {
  ctx = await setup()
  shopId = (await seedDemo(ctx.store, ctx.admin.id, PASSWORD)).datasourceId
  alice = (await ctx.store.users.findByUsername('alice')) as typeof alice
  bob = (await ctx.store.users.findByUsername('bob')) as typeof bob
  const ran = (user: typeof alice, sql: string) =>
    ctx.store.audit.queries.write({
      user_id: user.id,
      username: user.username,
      data_source_id: shopId,
      datasource_name: 'shop',
      original_query: sql,
      status: 'success',
    })
  for (const sql of ALICE_RAN) ran(alice, sql)
  ran(alice, 'SELECT name FROM tenants')
  ran(bob, 'SELECT id, total FROM orders')
  await ctx.store.audit.queries.flush()
})
afterAll(async () => {
  await ctx.close()
})

const simulateBody = (body: Record<string, unknown>) =>
  ctx.json('POST', '/api/v1/simulations', { body: { datasource_id: shopId, ...body } })

const byQuery =
  (body: { queries: { original_sql: string; user: { username: string } }[] }) =>
  (sql: string, user = 'alice') =>
    body.queries.find((q) => q.original_sql === sql && q.user.username === user) as any

describe('POST /simulations', () => {
  it('shows which audited queries a new column deny would refuse or narrow, and keeps nothing', async () => {
    const policiesBefore = (await ctx.store.policies.list({})).total
    const { status, body } = await simulateBody({
      changes: {
        create_policies: [
          {
            ref: 'no-email',
            name: 'email-deny',
            policy_type: 'column_deny',
            targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
          },
        ],
        assign: [{ policy_ref: 'no-email', scope: 'all' }],
      },
    })
    expect(status).toBe(200)
    const q = byQuery(body)
    const explicit = q('SELECT id, email FROM customers ORDER BY id')
    expect(explicit.change).toBe('newly_refused')
    expect(explicit.before).toMatchObject({ allowed: true, rows: 2, error: null })
    expect(explicit.after.error).toEqual({
      sqlstate: '42703',
      message: 'column "email" does not exist',
    })
    const star = q('SELECT * FROM customers')
    expect(star.change).toBe('changed')
    expect(star.columns_removed).toEqual(expect.arrayContaining(['email', 'customers.email']))
    expect(star.rows_delta).toBe(0)
    const tenants = q('SELECT name FROM tenants')
    expect(tenants.change).toBe('unchanged')
    expect(tenants.occurrences).toBe(2)
    expect(body.summary).toMatchObject({ users: 2, newly_refused: 1, newly_allowed: 0 })
    expect(body.summary.queries).toBe(5)
    // Nothing of the proposal was saved or audited as a change; the simulation itself was.
    expect((await ctx.store.policies.list({})).total).toBe(policiesBefore)
    const audit = await ctx.json('GET', `/api/v1/audit/admin?resource_id=${shopId}`)
    const actions = audit.body.data.map((e: { action: string }) => e.action)
    expect(actions).toContain('simulate')
    expect(audit.body.data.find((e: { action: string }) => e.action === 'simulate').actor_id).toBe(
      ctx.admin.id,
    )
    const created = await ctx.json('GET', '/api/v1/audit/admin?resource_type=policy&action=create')
    const names = created.body.data.map((e: { changes: string }) => JSON.parse(e.changes).name)
    expect(names).not.toContain('email-deny')
  })

  it('counts the rows a tightened row filter takes away, per user', async () => {
    const policies = await ctx.store.policies.list({})
    const isolation = policies.data.find((p) => p.name === 'tenant-isolation') as {
      id: string
      version: number
    }
    const { body } = await simulateBody({
      changes: {
        update_policies: [
          {
            id: isolation.id,
            version: isolation.version,
            filter_expression: "tenant = {user.tenant} AND tenant <> 'globex'",
          },
        ],
      },
      window: { user_ids: [alice.id, bob.id] },
    })
    const q = byQuery(body)
    expect(q('SELECT id, total FROM orders').change).toBe('unchanged')
    const bobs = q('SELECT id, total FROM orders', 'bob')
    expect(bobs).toMatchObject({ change: 'changed', rows_delta: -2 })
    expect(bobs.before.rows).toBe(2)
    expect(bobs.after.rows).toBe(0)
    expect(body.summary.fewer_rows).toBe(1)
  })

  it('shows unmasked columns when a mask is removed, and replays only the chosen users', async () => {
    const policies = await ctx.store.policies.list({})
    const mask = policies.data.find((p) => p.name === 'email-mask') as { id: string }
    const { body } = await simulateBody({
      changes: { delete_policies: [mask.id] },
      window: { user_ids: [alice.id], max_queries: 10 },
      execute: false,
    })
    expect(body.summary.users).toBe(1)
    const star = byQuery(body)('SELECT * FROM customers')
    expect(star.columns_unmasked).toEqual(['customers.email'])
    expect(star.before.rows).toBeNull()
    expect((await ctx.store.policies.get(mask.id)).name).toBe('email-mask')
  })

  it("points a proposal's validation errors into the request", async () => {
    const bad = await simulateBody({
      changes: { create_policies: [{ name: 'x', policy_type: 'row_filter', targets: [] }] },
    })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details[0].field).toMatch(/^changes\.create_policies\[0\]\./)
    const ref = await simulateBody({ changes: { assign: [{ policy_ref: 'nope', scope: 'all' }] } })
    expect(ref.status).toBe(422)
    expect(ref.body.error.details[0].field).toBe('changes.assign[0].policy_ref')
    expect((await simulateBody({ changes: {}, max_rows: 0 })).status).toBe(422)
  })
})
