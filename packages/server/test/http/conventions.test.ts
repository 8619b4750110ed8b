import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAdminApp } from '../../src/http/index.js'
import { signToken } from '../../src/http/jwt.js'
import { createTestStore } from '../fixtures/snapshots.js'
import { JWT_SECRET, MISSING_ID, setup, type TestContext } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

describe('response headers', () => {
  it('sets the security headers on success and error responses', async () => {
    for (const path of ['/health', '/api/v1/nope']) {
      const res = await ctx.call('GET', path)
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    }
  })

  it('echoes a printable client request id and replaces an unusable one', async () => {
    const ok = await ctx.call('GET', '/health', { headers: { 'X-Request-Id': 'trace-42' } })
    expect(ok.headers.get('x-request-id')).toBe('trace-42')
    const long = await ctx.call('GET', '/health', { headers: { 'X-Request-Id': 'a'.repeat(129) } })
    expect(long.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('sends no CORS headers unless origins are configured', async () => {
    const res = await ctx.call('GET', '/health', { headers: { Origin: 'https://ui.example' } })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('answers CORS preflights for configured origins', async () => {
    const app = createAdminApp({
      store: ctx.store,
      jwtSecret: JWT_SECRET,
      corsOrigins: ['https://ui.example'],
    })
    const res = await app.request('/api/v1/users', {
      method: 'OPTIONS',
      headers: { Origin: 'https://ui.example', 'Access-Control-Request-Method': 'PUT' },
    })
    expect(res.headers.get('access-control-allow-origin')).toBe('https://ui.example')
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,PATCH,DELETE')
    expect(res.headers.get('access-control-allow-headers')).toBe('Authorization,Content-Type')
  })
})

describe('health', () => {
  it('reports ok and the version without a token', async () => {
    const { status, body } = await ctx.json('GET', '/health', { token: null })
    expect(status).toBe(200)
    expect(body).toEqual({ status: 'ok', version: '9.9.9' })
  })

  it('reports readiness without a token (a bare admin app lists no datasources)', async () => {
    const { status, body } = await ctx.json('GET', '/ready', { token: null })
    expect(status).toBe(200)
    expect(body).toEqual({
      status: 'ready',
      version: '9.9.9',
      reasons: [],
      store: 'ok',
      change_feed: 'live',
      datasources: [],
    })
  })
})

describe('routing and the check order', () => {
  it('answers an unknown route with 404 not_found in the error envelope', async () => {
    const { status, body } = await ctx.json('GET', '/api/v1/nothing-here')
    expect(status).toBe(404)
    expect(body).toEqual({ error: { code: 'not_found', message: 'route not found' } })
  })

  it('answers an unknown route without a token with 401 first', async () => {
    const { status, body } = await ctx.json('GET', '/api/v1/nothing-here', { token: null })
    expect(status).toBe(401)
    expect(body.error.code).toBe('unauthorized')
  })

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    const res = await ctx.call('POST', '/api/v1/roles/impact-not-a-route')
    expect(res.status).toBe(405)
    const users = await ctx.call('DELETE', '/api/v1/users')
    expect(users.status).toBe(405)
    expect(users.headers.get('allow')).toBe('GET, POST')
    expect(((await users.json()) as any).error.code).toBe('method_not_allowed')
  })

  it('prefers literal segments over ids', async () => {
    const res = await ctx.call('GET', '/api/v1/policies/validate-expression')
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    const test = await ctx.call('GET', '/api/v1/decision-functions/test')
    expect(test.status).toBe(405)
  })

  it('ignores a trailing slash', async () => {
    const { status, body } = await ctx.json('GET', '/api/v1/users/')
    expect(status).toBe(200)
    expect(body.total).toBeGreaterThanOrEqual(1)
  })

  it('rejects a body that is not JSON with 415', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/roles', {
      body: 'name=x',
      headers: { 'Content-Type': 'text/plain' },
    })
    expect(status).toBe(415)
    expect(body.error.code).toBe('unsupported_media_type')
  })

  it('accepts a JSON content type with a charset parameter', async () => {
    const { status } = await ctx.json('POST', '/api/v1/roles', {
      body: { name: 'charset-role' },
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    })
    expect(status).toBe(201)
  })

  it('rejects a body over 1 MiB with 413', async () => {
    const big = JSON.stringify({ name: 'x', description: 'y'.repeat(1024 * 1024) })
    const { status, body } = await ctx.json('POST', '/api/v1/roles', { body: big })
    expect(status).toBe(413)
    expect(body.error.code).toBe('payload_too_large')
  })

  it('rejects malformed and missing JSON bodies with 400 malformed_json', async () => {
    const bad = await ctx.json('POST', '/api/v1/roles', { body: '{"name": ' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('malformed_json')
    const empty = await ctx.json('POST', '/api/v1/roles')
    expect(empty.status).toBe(400)
    expect(empty.body.error.code).toBe('malformed_json')
  })

  it('rejects a malformed id with 400 invalid_parameter before reading the body', async () => {
    const { status, body } = await ctx.json('PUT', '/api/v1/roles/not-a-uuid', { body: '{' })
    expect(status).toBe(400)
    expect(body.error.code).toBe('invalid_parameter')
    expect(body.error.details[0].field).toBe('id')
  })

  it('checks that the resource exists before validating the body', async () => {
    const { status, body } = await ctx.json('PUT', `/api/v1/roles/${MISSING_ID}`, {
      body: { name: 1 },
    })
    expect(status).toBe(404)
    expect(body.error.code).toBe('not_found')
  })

  it('reports every failing field together with 422 validation_failed', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/users', {
      body: { username: 'x', password: 'short', email: 5 },
    })
    expect(status).toBe(422)
    expect(body.error.code).toBe('validation_failed')
    const fields = body.error.details.map((d: { field: string }) => d.field)
    expect(fields).toEqual(expect.arrayContaining(['username', 'password', 'email']))
    for (const d of body.error.details)
      expect(Object.keys(d).sort()).toEqual(['code', 'field', 'message'])
  })

  it('names nested fields with bracketed indexes', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/policies', {
      body: { name: 'p', policy_type: 'row_filter', targets: [{ schemas: ['public'], tables: 3 }] },
    })
    expect(status).toBe(422)
    expect(body.error.details.map((d: { field: string }) => d.field)).toContain('targets[0].tables')
  })

  it('answers an unexpected failure with 500 carrying only the request id', async () => {
    const logs: Record<string, unknown>[] = []
    const broken = await createTestStore({ secretKey: 'x'.repeat(32) })
    await broken.close()
    const app = createAdminApp({
      store: broken,
      jwtSecret: JWT_SECRET,
      logger: (e) => logs.push(e),
    })
    const now = Math.floor(Date.now() / 1000)
    const token = signToken(
      { sub: MISSING_ID, username: 'ghost', is_admin: true, iat: now, exp: now + 60 },
      JWT_SECRET,
    )
    const res = await app.request('/api/v1/users', {
      headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'req-500' },
    })
    expect(res.status).toBe(500)
    expect((await res.json()) as any).toEqual({
      error: { code: 'internal_error', message: 'internal error (request id req-500)' },
    })
    expect(logs[0]?.['request_id']).toBe('req-500')
    // Liveness does not depend on the store; readiness does.
    expect((await app.request('/health')).status).toBe(200)
    const ready = await app.request('/ready')
    expect(ready.status).toBe(503)
    expect(((await ready.json()) as any).reasons).toContain('the store is unreachable')
  })
})
