import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeUser, PASSWORD, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

/** A console session as the browser holds it: the cookie pair and the page's CSRF token. */
interface Session {
  cookie: string
  csrf: string
  setCookie: string
}

async function openSession(username = 'admin', url = 'http://admin.test'): Promise<Session> {
  const res = await ctx.app.request(`${url}/api/v1/auth/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password: PASSWORD }),
  })
  expect(res.status).toBe(200)
  const setCookie = res.headers.get('set-cookie') ?? ''
  const body = (await res.json()) as { csrf_token: string }
  return { cookie: setCookie.split(';')[0] ?? '', csrf: body.csrf_token, setCookie }
}

/** A request signed in by the session's cookie only, with or without its CSRF header. */
function withCookie(
  session: Session,
  method: string,
  path: string,
  options: { body?: unknown; csrf?: string | null } = {},
) {
  const csrf = options.csrf === undefined ? session.csrf : options.csrf
  return ctx.call(method, path, {
    token: null,
    body: options.body,
    headers: { Cookie: session.cookie, ...(csrf === null ? {} : { 'X-CSRF-Token': csrf }) },
  })
}

describe('the console session cookie', () => {
  it('is set by POST /auth/session as HttpOnly, SameSite=Strict, for /api/v1, as long as the token', async () => {
    const res = await ctx.call('POST', '/api/v1/auth/session', {
      token: null,
      body: { username: 'admin', password: PASSWORD },
    })
    expect(res.status).toBe(200)
    const flags = (res.headers.get('set-cookie') ?? '').split(/;\s*/)
    expect(flags[0]).toMatch(/^palisade_session=[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(flags.slice(1).sort()).toEqual(
      ['HttpOnly', 'Max-Age=86400', 'Path=/api/v1', 'SameSite=Strict'].sort(),
    )
    const body = (await res.json()) as Record<string, unknown>
    // The page gets the CSRF token, never the admin token itself.
    expect(Object.keys(body).sort()).toEqual(['csrf_token', 'expires_at', 'user'])
    expect(body['csrf_token']).toMatch(/^[\w-]{43}$/)
    expect((body['user'] as { username: string }).username).toBe('admin')
  })

  it('is marked Secure when the admin API is served over TLS', async () => {
    const { setCookie } = await openSession('admin', 'https://admin.test')
    expect(setCookie.split(/;\s*/)).toContain('Secure')
  })

  it('is refused to a wrong password and to a user who is not an admin, with no cookie', async () => {
    const wrong = await ctx.call('POST', '/api/v1/auth/session', {
      token: null,
      body: { username: 'admin', password: 'Wrong-Passw0rd!' },
    })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    const user = await makeUser(ctx)
    const plain = await ctx.call('POST', '/api/v1/auth/session', {
      token: null,
      body: { username: user.username, password: PASSWORD },
    })
    expect(plain.status).toBe(403)
    expect(plain.headers.get('set-cookie')).toBeNull()
  })

  it('authenticates reads without a header, and GET /auth/session answers the same CSRF token', async () => {
    const session = await openSession()
    expect((await withCookie(session, 'GET', '/api/v1/users', { csrf: null })).status).toBe(200)
    const again = await withCookie(session, 'GET', '/api/v1/auth/session', { csrf: null })
    expect(again.status).toBe(200)
    expect(((await again.json()) as { csrf_token: string }).csrf_token).toBe(session.csrf)
    expect((await ctx.call('GET', '/api/v1/auth/session', { token: null })).status).toBe(401)
  })

  it('refuses a write without the CSRF header, or with another session’s, as 403 csrf_failed', async () => {
    const session = await openSession()
    const other = await openSession()
    const body = { name: unique('role') }
    for (const csrf of [null, '', other.csrf, `${session.csrf}x`]) {
      const res = await withCookie(session, 'POST', '/api/v1/roles', { body, csrf })
      expect(res.status).toBe(403)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('csrf_failed')
    }
    expect((await ctx.store.roles.list({ search: body.name })).total).toBe(0)
    expect((await withCookie(session, 'POST', '/api/v1/roles', { body })).status).toBe(201)
  })

  it('leaves Bearer clients as they were: no CSRF header, and the header wins over a cookie', async () => {
    const session = await openSession()
    const bearer = await ctx.call('POST', '/api/v1/roles', { body: { name: unique('role') } })
    expect(bearer.status).toBe(201)
    const both = await ctx.call('POST', '/api/v1/roles', {
      body: { name: unique('role') },
      headers: { Cookie: session.cookie },
    })
    expect(both.status).toBe(201)
    const badBearer = await ctx.call('GET', '/api/v1/users', {
      token: 'not-a-token',
      headers: { Cookie: session.cookie },
    })
    expect(badBearer.status).toBe(401)
  })

  it('is cleared by POST /auth/logout, which also revokes its token for every tab and client', async () => {
    const session = await openSession()
    expect((await withCookie(session, 'POST', '/api/v1/auth/logout', { csrf: null })).status).toBe(
      403,
    )
    const out = await withCookie(session, 'POST', '/api/v1/auth/logout')
    expect(out.status).toBe(204)
    const cleared = (out.headers.get('set-cookie') ?? '').split(/;\s*/)
    expect(cleared[0]).toBe('palisade_session=')
    expect(cleared).toContain('Max-Age=0')
    expect(cleared).toContain('Path=/api/v1')
    // Another tab still sending the cookie, or a script that copied the token, is refused.
    const late = await withCookie(session, 'GET', '/api/v1/users')
    expect(late.status).toBe(401)
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('invalid_token')
    const token = session.cookie.slice('palisade_session='.length)
    expect((await ctx.call('GET', '/api/v1/users', { token })).status).toBe(401)
    // A Bearer logout sets no cookie.
    const bearer = await ctx.call('POST', '/api/v1/auth/logout', {
      token: await ctx.login('admin'),
    })
    expect(bearer.status).toBe(204)
    expect(bearer.headers.get('set-cookie')).toBeNull()
  })
})
