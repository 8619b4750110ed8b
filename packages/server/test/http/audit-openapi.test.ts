import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAdminRoutes } from '../../src/http/app.js'
import { makeUser, setup, type TestContext } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

describe('admin audit', () => {
  it('lists entries newest first with the pagination envelope and filters', async () => {
    const user = await makeUser(ctx)
    await ctx.store.users.update(user.id, { display_name: 'Z' }, ctx.admin.id)
    const all = await ctx.json('GET', `/api/v1/audit/admin?resource_id=${user.id}`)
    expect(all.status).toBe(200)
    expect(all.body).toMatchObject({ total: 2, page: 1, page_size: 50 })
    expect(all.body.data.map((e: { action: string }) => e.action)).toEqual(['update', 'create'])
    const creates = await ctx.json(
      'GET',
      `/api/v1/audit/admin?resource_type=user&action=create&actor_id=${ctx.admin.id}&limit=1`,
    )
    expect(creates.body.page_size).toBe(1)
    expect(creates.body.data[0].action).toBe('create')
    const future = await ctx.json('GET', '/api/v1/audit/admin?since=2999-01-01T00:00:00Z')
    expect(future.body).toMatchObject({ data: [], total: 0 })
    const clamped = await ctx.json('GET', '/api/v1/audit/admin?page_size=500')
    expect(clamped.body.page_size).toBe(200)
  })

  it('rejects bad filters and conflicting spellings with 400 invalid_parameter', async () => {
    const queries = [
      'resource_type=spaceship',
      'action=explode',
      'actor_id=nope',
      'from=yesterday',
      'page_size=5&limit=6',
      'from=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z',
      'from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
    ]
    for (const q of queries) {
      const { status, body } = await ctx.json('GET', `/api/v1/audit/admin?${q}`)
      expect(status, q).toBe(400)
      expect(body.error.code).toBe('invalid_parameter')
    }
  })

  it('lists query audit rows with filters', async () => {
    const user = await makeUser(ctx)
    ctx.store.audit.queries.write({
      user_id: user.id,
      username: user.username,
      data_source_id: '0190a0a0-0000-7000-8000-000000000001',
      datasource_name: 'shop',
      original_query: 'select 1',
      rewritten_query: 'select 1',
      policies_applied: '[]',
      execution_time_ms: 1,
      client_info: null,
      status: 'success',
      error_message: null,
    } as any)
    await ctx.store.audit.queries.flush()
    const { status, body } = await ctx.json('GET', `/api/v1/audit/queries?user_id=${user.id}`)
    expect(status).toBe(200)
    expect(body.total).toBe(1)
    expect(body.data[0]).toMatchObject({ username: user.username, status: 'success' })
    const denied = await ctx.json('GET', `/api/v1/audit/queries?user_id=${user.id}&status=denied`)
    expect(denied.body.total).toBe(0)
    expect((await ctx.json('GET', '/api/v1/audit/queries?status=weird')).status).toBe(400)
  })

  it('has no write routes', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await ctx.call(method, '/api/v1/audit/admin', { body: {} })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('GET')
    }
  })
})

describe('openapi document', () => {
  it('lists every registered route with its method', async () => {
    const { body } = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    const routes = listAdminRoutes()
    expect(routes.length).toBeGreaterThan(50)
    for (const { method, path } of routes) {
      expect(body.paths[path]?.[method.toLowerCase()], `${method} ${path}`).toBeDefined()
    }
  })

  it('describes request bodies and parameters from the validation schemas', async () => {
    const { body } = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    const create = body.paths['/api/v1/users'].post
    expect(create.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['username', 'password']),
    )
    const get = body.paths['/api/v1/users/{id}'].get
    expect(get.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path' })])
    expect(body.paths['/health'].get.security).toEqual([])
  })
})
