import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signToken } from '../../src/http/jwt.js'
import { JWT_SECRET, makeUser, PASSWORD, setup, type TestContext } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

function forge(sub: string, offsetSeconds = 0, secret = JWT_SECRET) {
  const now = Math.floor(Date.now() / 1000) + offsetSeconds
  return signToken({ sub, username: 'x', is_admin: true, iat: now, exp: now + 60 }, secret)
}

describe('POST /auth/login', () => {
  it('returns a bearer token, its expiry and the user with last_login_at set', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/auth/login', {
      body: { username: 'admin', password: PASSWORD },
      token: null,
    })
    expect(status).toBe(200)
    expect(body.token_type).toBe('Bearer')
    expect(body.token.split('.')).toHaveLength(3)
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(86_000_000)
    expect(body.user.username).toBe('admin')
    expect(body.user.last_login_at).not.toBeNull()
    const claims = JSON.parse(Buffer.from(body.token.split('.')[1], 'base64url').toString())
    expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'is_admin', 'jti', 'sub', 'username'])
    expect(claims.jti).toMatch(/^[A-Za-z0-9_-]{22}$/)
  })

  it('gives two logins in the same second distinct tokens', async () => {
    const user = await makeUser(ctx, { is_admin: true })
    // Both logins start right after a second begins, so their iat and exp are the same.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000)))
    const [a, b] = await Promise.all([ctx.login(user.username), ctx.login(user.username)])
    const claimsOf = (t: string) =>
      JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString())
    expect(claimsOf(a).iat).toBe(claimsOf(b).iat)
    expect(claimsOf(a).exp).toBe(claimsOf(b).exp)
    expect(a).not.toBe(b)
    expect(claimsOf(a).jti).not.toBe(claimsOf(b).jti)
  })

  it('answers unknown user, wrong password and inactive user identically', async () => {
    const inactive = await makeUser(ctx, { is_admin: true, is_active: false })
    const attempts = [
      { username: 'nobody', password: PASSWORD },
      { username: 'admin', password: 'Wrong-Passw0rd!' },
      { username: inactive.username, password: PASSWORD },
    ]
    for (const body of attempts) {
      const res = await ctx.json('POST', '/api/v1/auth/login', { body, token: null })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({
        error: { code: 'invalid_credentials', message: 'invalid username or password' },
      })
    }
  })

  it('refuses a correct password of a non-admin with 403 admin_required', async () => {
    const user = await makeUser(ctx)
    const { status, body } = await ctx.json('POST', '/api/v1/auth/login', {
      body: { username: user.username, password: PASSWORD },
      token: null,
    })
    expect(status).toBe(403)
    expect(body.error.code).toBe('admin_required')
  })

  it('rejects a missing or non-string field with 422', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/auth/login', {
      body: { username: 5 },
      token: null,
    })
    expect(status).toBe(422)
    expect(body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'password',
      'username',
    ])
  })

  it('writes no admin-audit entry', async () => {
    const before = (await ctx.store.audit.admin.list()).total
    await ctx.login('admin')
    expect((await ctx.store.audit.admin.list()).total).toBe(before)
  })
})

describe('token checks', () => {
  it('requires a Bearer authorization header', async () => {
    for (const header of [undefined, 'Basic abc', 'Bearer']) {
      const headers: Record<string, string> = header ? { Authorization: header } : {}
      const { status, body } = await ctx.json('GET', '/api/v1/users', { token: null, headers })
      expect(status).toBe(401)
      expect(body.error.code).toBe('unauthorized')
    }
  })

  it('accepts the scheme name in any case', async () => {
    const res = await ctx.call('GET', '/api/v1/users', {
      token: null,
      headers: { Authorization: `bEaReR ${ctx.token}` },
    })
    expect(res.status).toBe(200)
  })

  it('rejects a bad signature, garbage and an expired token with 401 invalid_token', async () => {
    const expired = signToken(
      { sub: ctx.admin.id, username: 'admin', is_admin: true, iat: 1000, exp: 2000 },
      JWT_SECRET,
    )
    const tokens = [
      forge(ctx.admin.id, 0, 'another-secret-another-secret-another'),
      'a.b.c',
      expired,
    ]
    for (const token of tokens) {
      const { status, body } = await ctx.json('GET', '/api/v1/users', { token })
      expect(status).toBe(401)
      expect(body.error.code).toBe('invalid_token')
    }
  })

  it('rejects a jti that is not a non-empty string', async () => {
    const now = Math.floor(Date.now() / 1000)
    for (const jti of [42, '']) {
      const claims = { sub: ctx.admin.id, username: 'x', is_admin: true, iat: now, exp: now + 60 }
      const token = signToken({ ...claims, jti: jti as string }, JWT_SECRET)
      const { status, body } = await ctx.json('GET', '/api/v1/auth/me', { token })
      expect(status).toBe(401)
      expect(body.error.code).toBe('invalid_token')
    }
  })

  it('tolerates 30 seconds of clock skew on exp', async () => {
    const now = Math.floor(Date.now() / 1000)
    const token = signToken(
      { sub: ctx.admin.id, username: 'admin', is_admin: true, iat: now, exp: now - 10 },
      JWT_SECRET,
    )
    expect((await ctx.call('GET', '/api/v1/users', { token })).status).toBe(200)
  })

  it('rejects the token of a deleted or deactivated admin on the next request', async () => {
    const gone = await makeUser(ctx, { is_admin: true })
    const off = await makeUser(ctx, { is_admin: true })
    const goneToken = await ctx.login(gone.username)
    const offToken = await ctx.login(off.username)
    await ctx.store.users.delete(gone.id, ctx.admin.id)
    await ctx.store.users.update(off.id, { is_active: false }, ctx.admin.id)
    for (const token of [goneToken, offToken]) {
      const { status, body } = await ctx.json('GET', '/api/v1/auth/me', { token })
      expect(status).toBe(401)
      expect(body.error.code).toBe('invalid_token')
    }
  })

  it('answers a demoted admin with 403 admin_required but still serves /auth/me', async () => {
    const demoted = await makeUser(ctx, { is_admin: true })
    const token = await ctx.login(demoted.username)
    await ctx.store.users.update(demoted.id, { is_admin: false }, ctx.admin.id)
    const users = await ctx.json('GET', '/api/v1/users', { token })
    expect(users.status).toBe(403)
    expect(users.body.error.code).toBe('admin_required')
    const me = await ctx.json('GET', '/api/v1/auth/me', { token })
    expect(me.status).toBe(200)
    expect(me.body.id).toBe(demoted.id)
    expect(me.body.is_admin).toBe(false)
  })

  it('revokes tokens issued before a password change', async () => {
    const user = await makeUser(ctx, { is_admin: true })
    const old = await ctx.login(user.username)
    // iat and password_changed_at compare in whole seconds: move past the login's second.
    await new Promise((r) => setTimeout(r, 1100 - (Date.now() % 1000)))
    const { status } = await ctx.json('PUT', `/api/v1/users/${user.id}/password`, {
      body: { password: 'Newer-Passw0rd!' },
    })
    expect(status).toBe(200)
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: old })).status).toBe(401)
    const fresh = await ctx.login(user.username, 'Newer-Passw0rd!')
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: fresh })).status).toBe(200)
  })
})

describe('token lifecycle', () => {
  it('ends a token at logout, on this and every later request, and leaves other tokens alone', async () => {
    const user = await makeUser(ctx, { is_admin: true })
    // Two logins in one second: logout of the first must leave the second working.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000)))
    const first = await ctx.login(user.username)
    const second = await ctx.login(user.username)
    expect(second).not.toBe(first)
    const out = await ctx.call('POST', '/api/v1/auth/logout', { token: first })
    expect(out.status).toBe(204)
    for (const path of ['/api/v1/auth/me', '/api/v1/users']) {
      const { status, body } = await ctx.json('GET', path, { token: first })
      expect(status).toBe(401)
      expect(body.error.code).toBe('invalid_token')
    }
    expect((await ctx.json('POST', '/api/v1/auth/logout', { token: first })).status).toBe(401)
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: second })).status).toBe(200)
    expect((await ctx.json('GET', '/api/v1/users', { token: second })).status).toBe(200)
    // A token without jti (issued before the claim existed) is ended by its digest, alone.
    const now = Math.floor(Date.now() / 1000)
    const legacy = (extra: number) =>
      signToken(
        { sub: user.id, username: user.username, is_admin: true, iat: now, exp: now + 60 + extra },
        JWT_SECRET,
      )
    expect((await ctx.call('POST', '/api/v1/auth/logout', { token: legacy(0) })).status).toBe(204)
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: legacy(0) })).status).toBe(401)
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: legacy(1) })).status).toBe(200)
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: second })).status).toBe(200)
    // A non-admin's token (it can reach /auth/me) can log out too.
    const plain = await makeUser(ctx)
    const plainToken = signToken(
      {
        sub: plain.id,
        username: plain.username,
        is_admin: false,
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 60,
      },
      JWT_SECRET,
    )
    expect((await ctx.call('POST', '/api/v1/auth/logout', { token: plainToken })).status).toBe(204)
    expect((await ctx.json('GET', '/api/v1/auth/me', { token: plainToken })).status).toBe(401)
  })

  it('lists logout in the OpenAPI document', async () => {
    const doc = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    expect(doc.body.paths['/api/v1/auth/logout']?.post).toBeDefined()
  })
})

describe('GET /openapi.json', () => {
  it('needs no token', async () => {
    const { status, body } = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    expect(status).toBe(200)
    expect(body.openapi).toBe('3.1.0')
  })
})
