import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, makeUser, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

const rowFilter = () => ({
  name: unique('p'),
  policy_type: 'row_filter',
  targets: [{ schemas: ['public'], tables: ['orders'] }],
  filter_expression: 'tenant = {user.tenant}',
})

describe('policies', () => {
  it('creates a policy at version 1 and updates it with the version', async () => {
    const res = await ctx.call('POST', '/api/v1/policies', { body: rowFilter() })
    expect(res.status).toBe(201)
    const p = (await res.json()) as any
    expect(p).toMatchObject({ version: 1, assignment_count: 0 })
    const upd = await ctx.json('PUT', `/api/v1/policies/${p.id}`, {
      body: { version: 1, description: 'x' },
    })
    expect(upd.status).toBe(200)
    expect(upd.body.version).toBe(2)
    const stale = await ctx.json('PATCH', `/api/v1/policies/${p.id}`, {
      body: { version: 1, description: 'y' },
    })
    expect(stale.status).toBe(409)
    expect(stale.body.error.code).toBe('version_conflict')
    const noVersion = await ctx.json('PUT', `/api/v1/policies/${p.id}`, { body: {} })
    expect(noVersion.status).toBe(422)
    expect(noVersion.body.error.details[0]).toMatchObject({ field: 'version', code: 'required' })
  })

  it('rejects a shape violation and a bad expression with 422', async () => {
    const shape = await ctx.json('POST', '/api/v1/policies', {
      body: { ...rowFilter(), filter_expression: null },
    })
    expect(shape.status).toBe(422)
    expect(shape.body.error.code).toBe('validation_failed')
    const expr = await ctx.json('POST', '/api/v1/policies', {
      body: { ...rowFilter(), filter_expression: 'tenant = (select 1)' },
    })
    expect(expr.status).toBe(422)
    expect(expr.body.error.code).toBe('invalid_expression')
  })

  it('lists, filters by type, gets and deletes policies', async () => {
    const p = await ctx.store.policies.create(rowFilter() as any, ctx.admin.id)
    const list = await ctx.json('GET', '/api/v1/policies?policy_type=row_filter')
    expect(list.body.total).toBeGreaterThanOrEqual(1)
    const bad = await ctx.json('GET', '/api/v1/policies?policy_type=nope')
    expect(bad.status).toBe(400)
    expect((await ctx.json('GET', `/api/v1/policies/${p.id}`)).body.assignments).toEqual([])
    expect((await ctx.call('DELETE', `/api/v1/policies/${p.id}`)).status).toBe(204)
    expect((await ctx.call('GET', `/api/v1/policies/${p.id}`)).status).toBe(404)
  })

  it('validates an expression without side effects', async () => {
    const ok = await ctx.json('POST', '/api/v1/policies/validate-expression', {
      body: { expression: 'tenant = {user.tenant}' },
    })
    expect(ok.body).toEqual({
      valid: true,
      variables: ['tenant'],
      undefined_attributes: ['tenant'],
    })
    const bad = await ctx.json('POST', '/api/v1/policies/validate-expression', {
      body: { expression: 'select' },
    })
    expect(bad.status).toBe(200)
    expect(bad.body.valid).toBe(false)
    const malformed = await ctx.json('POST', '/api/v1/policies/validate-expression', { body: {} })
    expect(malformed.status).toBe(422)
  })
})

describe('attribute definitions', () => {
  it('creates, lists, updates and deletes a definition', async () => {
    const res = await ctx.call('POST', '/api/v1/attribute-definitions', {
      body: { key: unique('k'), entity_type: 'user', value_type: 'string' },
    })
    expect(res.status).toBe(201)
    const def = (await res.json()) as any
    const list = await ctx.json('GET', '/api/v1/attribute-definitions?entity_type=user')
    expect(list.body).toMatchObject({ page_size: 50 })
    const upd = await ctx.json('PATCH', `/api/v1/attribute-definitions/${def.id}`, {
      body: { display_name: 'Tenant' },
    })
    expect(upd.body.display_name).toBe('Tenant')
    const immutable = await ctx.json('PUT', `/api/v1/attribute-definitions/${def.id}`, {
      body: { key: 'other' },
    })
    expect(immutable.status).toBe(422)
    expect((await ctx.call('DELETE', `/api/v1/attribute-definitions/${def.id}`)).status).toBe(204)
  })

  it('rejects reserved keys and duplicates, and blocks deleting a key in use', async () => {
    const reserved = await ctx.json('POST', '/api/v1/attribute-definitions', {
      body: { key: 'roles', entity_type: 'user', value_type: 'string' },
    })
    expect(reserved.status).toBe(422)
    expect(reserved.body.error.details[0].code).toBe('reserved')
    const key = unique('k')
    const body = { key, entity_type: 'user', value_type: 'string' }
    const def = (await ctx.json('POST', '/api/v1/attribute-definitions', { body })).body
    expect((await ctx.json('POST', '/api/v1/attribute-definitions', { body })).status).toBe(409)
    await makeUser(ctx, { attributes: { [key]: 'acme' } })
    const inUse = await ctx.json('DELETE', `/api/v1/attribute-definitions/${def.id}`)
    expect(inUse.status).toBe(409)
    expect(inUse.body.error.code).toBe('in_use')
    const forced = await ctx.call('DELETE', `/api/v1/attribute-definitions/${def.id}?force=true`)
    expect(forced.status).toBe(204)
  })
})

describe('decision functions', () => {
  const source = 'function evaluate(ctx, config) { return { fire: true } }'

  it('creates, updates and deletes a function with optimistic versions', async () => {
    const res = await ctx.call('POST', '/api/v1/decision-functions', {
      body: { name: unique('f'), decision_fn: source, evaluate_context: 'session' },
    })
    expect(res.status).toBe(201)
    const fn = (await res.json()) as any
    expect(fn.version).toBe(1)
    const upd = await ctx.json('PUT', `/api/v1/decision-functions/${fn.id}`, {
      body: { version: 1, on_error: 'skip' },
    })
    expect(upd.body.version).toBe(2)
    expect((await ctx.json('GET', '/api/v1/decision-functions')).body.total).toBeGreaterThan(0)
    expect((await ctx.call('DELETE', `/api/v1/decision-functions/${fn.id}`)).status).toBe(204)
    expect((await ctx.call('GET', `/api/v1/decision-functions/${fn.id}`)).status).toBe(404)
  })

  it('rejects source without evaluate with 422 compile_failed', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/decision-functions', {
      body: { name: unique('f'), decision_fn: 'const x = 1', evaluate_context: 'query' },
    })
    expect(status).toBe(422)
    expect(body.error.code).toBe('compile_failed')
  })

  it('runs a test evaluation with either spelling of context and config', async () => {
    const fn = 'function evaluate(ctx, config) { return { fire: ctx.session.user.x === config.x } }'
    const { status, body } = await ctx.json('POST', '/api/v1/decision-functions/test', {
      body: { decision_fn: fn, config: { x: 1 }, context: { session: { user: { x: 1 } } } },
    })
    expect(status).toBe(200)
    expect(body).toMatchObject({ success: true, result: { fire: true } })
    const clash = await ctx.json('POST', '/api/v1/decision-functions/test', {
      body: { decision_fn: fn, config: { x: 1 }, decision_config: { x: 2 } },
    })
    expect(clash.status).toBe(422)
    const failing = await ctx.json('POST', '/api/v1/decision-functions/test', {
      body: { decision_fn: 'function evaluate() { return 1 }' },
    })
    expect(failing.status).toBe(200)
    expect(failing.body.success).toBe(false)
  })

  it('answers an unknown function with 404', async () => {
    const res = await ctx.json('PUT', `/api/v1/decision-functions/${MISSING_ID}`, {
      body: { version: 1 },
    })
    expect(res.status).toBe(404)
  })
})
