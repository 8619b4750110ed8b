import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, setup, type TestContext } from './helpers.js'

let ctx: TestContext
let policyId: string
const USER = '0190f000-0000-7000-8000-0000000000c1'
const DS = '0190f000-0000-7000-8000-0000000000f1'

beforeAll(async () => {
  ctx = await setup()
  const { body } = await ctx.json('POST', '/api/v1/policies', {
    body: {
      name: 'shadow-deny',
      policy_type: 'table_deny',
      targets: [{ schemas: ['public'], tables: ['payroll'] }],
      enforcement: 'shadow',
    },
  })
  policyId = body.id
  const shadow = [{ policy_id: policyId, version: 1, name: 'shadow-deny', decision: null }]
  for (const [sql, denied] of [
    ['SELECT * FROM payroll', true],
    ['SELECT 1', false],
  ] as const) {
    ctx.store.audit.queries.write({
      user_id: USER,
      username: 'erin',
      data_source_id: DS,
      datasource_name: 'hr',
      original_query: sql,
      status: 'success',
      shadow_policies: sql === 'SELECT 1' ? [] : shadow,
      shadow_denied: denied,
    })
  }
  await ctx.store.audit.queries.flush()
})
afterAll(() => ctx.close())

describe('shadow mode in the admin API', () => {
  it('creates, reads and switches a policy between shadow and enforce', async () => {
    const { body } = await ctx.json('GET', `/api/v1/policies/${policyId}`)
    expect(body.enforcement).toBe('shadow')
    const switched = await ctx.json('PUT', `/api/v1/policies/${policyId}`, {
      body: { version: body.version, enforcement: 'enforce' },
    })
    expect(switched.status).toBe(200)
    expect(switched.body).toMatchObject({ enforcement: 'enforce', version: body.version + 1 })
    const audit = await ctx.store.audit.admin.list({ resource_id: policyId, action: 'update' })
    expect(JSON.parse(audit.data[0]?.changes ?? '{}')).toMatchObject({
      before: { enforcement: 'shadow' },
      after: { enforcement: 'enforce' },
    })
    await ctx.json('PUT', `/api/v1/policies/${policyId}`, {
      body: { version: body.version + 1, enforcement: 'shadow' },
    })
  })

  it('refuses an unknown enforcement with 422', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/policies', {
      body: {
        name: 'bad-enforcement',
        policy_type: 'table_deny',
        targets: [{ schemas: ['*'], tables: ['x'] }],
        enforcement: 'sometimes',
      },
    })
    expect(status).toBe(422)
    expect(body.error.details[0]).toMatchObject({ field: 'enforcement' })
  })

  it('reports the statements a shadow policy matched and would have refused', async () => {
    const { status, body } = await ctx.json(
      'GET',
      `/api/v1/policies/${policyId}/shadow-report?examples=5`,
    )
    expect(status).toBe(200)
    expect(body).toMatchObject({ policy_id: policyId, statements: 1, would_deny: 1 })
    expect(body.users).toEqual([{ user_id: USER, username: 'erin', statements: 1, would_deny: 1 }])
    expect(body.examples).toHaveLength(1)
    expect(body.examples[0]).toMatchObject({
      original_query: 'SELECT * FROM payroll',
      would_deny: true,
    })
    const none = await ctx.json(
      'GET',
      `/api/v1/policies/${policyId}/shadow-report?from=2999-01-01T00:00:00Z`,
    )
    expect(none.body).toMatchObject({ statements: 0, would_deny: 0, users: [], examples: [] })
    expect((await ctx.json('GET', `/api/v1/policies/${MISSING_ID}/shadow-report`)).status).toBe(404)
    expect(
      (await ctx.json('GET', `/api/v1/policies/${policyId}/shadow-report?examples=500`)).status,
    ).toBe(400)
  })
})
