import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { LoginGuard } from '../../src/logins/login-guard.js'
import { LoginThrottle } from '../../src/logins/login-throttle.js'
import { OidcIssuer, type WebClient } from '../fixtures/oidc-issuer.js'
import { signInAtProvider } from '../fixtures/provider-browser.js'
import { MISSING_ID, makeUser, PASSWORD, setup, type TestContext, unique } from './helpers.js'

/**
 * Admin sign-in to the console through a real OpenID provider (docs/sso.md#console-sign-in):
 * authorization code with PKCE, state bound to the browser, ID token verified, admin rights from
 * the provider's admin claim only. Every refusal answers 401 sso_refused with its reason, lands
 * in the login audit and sets no session cookie.
 */
const REDIRECT_URI = 'http://localhost/ui'
const CONSOLE: WebClient = {
  clientId: 'palisade-console',
  secret: 'console-secret-for-tests',
  redirectUri: REDIRECT_URI,
}
const OTHER_CLIENT: WebClient = {
  clientId: 'another-app',
  secret: 'another-secret',
  redirectUri: REDIRECT_URI,
}

let ctx: TestContext
let issuer: OidcIssuer
let elsewhere: OidcIssuer
let providerId: string

beforeAll(async () => {
  // No skew: an ID token that expires on its way is refused at once. The suite's many refusals
  // come from one address: a throttle of 3 would stop it half way (tested on its own below).
  ctx = await setup({
    app: {
      tokenClockSkewSeconds: 0,
      logins: new LoginGuard(new LoginThrottle({ addressFailures: 1000 }), (record) =>
        ctx.store.logins.record(record),
      ),
    },
  })
  issuer = await OidcIssuer.start()
  elsewhere = await OidcIssuer.start()
  for (const idp of [issuer, elsewhere]) {
    idp.addWebClient(CONSOLE)
    idp.addWebClient(OTHER_CLIENT)
  }
  const created = await ctx.json('POST', '/api/v1/identity-providers', {
    body: {
      name: 'acme',
      issuer: issuer.issuer,
      client_id: CONSOLE.clientId,
      client_secret: CONSOLE.secret,
      console_sign_in: true,
      admin_claim: { claim: 'groups', value: 'palisade-admins' },
      jit_users: true,
    },
  })
  expect(created.status).toBe(201)
  providerId = created.body.id
})
afterAll(async () => {
  await issuer?.close()
  await elsewhere?.close()
  await ctx?.close()
})

/** An account at the provider; admins are in the `palisade-admins` group. */
function account(admin: boolean): string {
  const login = unique('sso')
  const claims = {
    preferred_username: login,
    email: `${login}@example.com`,
    groups: admin ? ['staff', 'palisade-admins'] : ['staff'],
  }
  issuer.addAccount(login, claims)
  elsewhere.addAccount(login, claims)
  return login
}

/** Starts a sign-in as the console does: the authorization URL and the browser's state cookie. */
async function start() {
  const res = await ctx.call('POST', '/api/v1/auth/sso/start', {
    token: null,
    body: { provider_id: providerId },
  })
  expect(res.status).toBe(200)
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const { authorization_url } = (await res.json()) as { authorization_url: string }
  return { url: authorization_url, cookie }
}

/** Posts the provider's redirect back, as the console page does, with the browser's cookie. */
async function callback(params: URLSearchParams, cookie: string) {
  const res = await ctx.call('POST', '/api/v1/auth/sso/callback', {
    token: null,
    body: Object.fromEntries(params),
    headers: cookie ? { Cookie: cookie } : {},
  })
  const body = (await res.json()) as any
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('palisade_session=')) ?? ''
  // The browser's state cookie is cleared by every callback, signed in or not.
  expect(res.headers.getSetCookie().some((c) => /^palisade_sso_state=;.*Max-Age=0/.test(c))).toBe(
    true,
  )
  return { status: res.status, body, setCookie }
}

/** The whole flow for one account at the provider. */
async function signIn(login: string) {
  const { url, cookie } = await start()
  const params = await signInAtProvider(url, login, REDIRECT_URI)
  return { ...(await callback(params, cookie)), params, cookie }
}

async function expectRefused(
  answer: { status: number; body: any; setCookie: string },
  reason: string,
  username = '',
) {
  expect(answer.status).toBe(401)
  expect(answer.body.error.code).toBe('sso_refused')
  expect(answer.body.error.details[0].code).toBe(reason)
  expect(answer.setCookie).not.toContain('palisade_session=')
  await vi.waitFor(async () => {
    const audit = await ctx.store.logins.list({ plane: 'admin', page_size: 100 })
    const entry = audit.data.find((e) => e.reason === reason && (e.username ?? '') === username)
    expect(entry).toMatchObject({ outcome: 'failed', reason })
  })
}

describe('console sign-in through an identity provider', () => {
  it('lists the providers enabled for console sign-in without a token', async () => {
    const res = await ctx.json('GET', '/api/v1/auth/sso/providers', { token: null })
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual([{ id: providerId, name: 'acme' }])
  })

  it('sends the browser to the provider with PKCE (S256), state and nonce', async () => {
    const { url, cookie } = await start()
    const asked = new URL(url)
    expect(`${asked.origin}${asked.pathname}`).toBe(`${issuer.issuer}/auth`)
    const q = asked.searchParams
    expect(q.get('response_type')).toBe('code')
    expect(q.get('client_id')).toBe(CONSOLE.clientId)
    expect(q.get('redirect_uri')).toBe(REDIRECT_URI)
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/)
    expect(q.get('state')).toMatch(/^[\w-]{20,}$/)
    expect(q.get('nonce')).toMatch(/^[\w-]{20,}$/)
    expect(cookie).toBe(`palisade_sso_state=${q.get('state')}`)
  })

  it('gives an admin of the provider the console session of a password sign-in', async () => {
    const login = account(true)
    const answer = await signIn(login)
    expect(answer.status).toBe(200)
    expect(answer.body.user).toMatchObject({ username: login, is_admin: true })
    const flags = answer.setCookie.split(/;\s*/)
    expect(flags[0]).toMatch(/^palisade_session=[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(flags).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/api/v1']))
    // The session works like any console session: reads with the cookie, writes with CSRF too.
    const session = flags[0] ?? ''
    const me = await ctx.json('GET', '/api/v1/auth/session', {
      token: null,
      headers: { Cookie: session },
    })
    expect(me.status).toBe(200)
    expect(me.body.csrf_token).toBe(answer.body.csrf_token)
    const write = await ctx.json('POST', '/api/v1/roles', {
      token: null,
      body: { name: unique('r') },
      headers: { Cookie: session, 'X-CSRF-Token': answer.body.csrf_token },
    })
    expect(write.status).toBe(201)
    // The user was created by the sign-in, audited with the provider.
    const audit = await ctx.json('GET', `/api/v1/audit/admin?resource_id=${answer.body.user.id}`)
    const created = audit.body.data.at(-1)
    expect(created.action).toBe('create')
    expect(JSON.parse(created.changes)).toMatchObject({
      after: { username: login, is_admin: true },
      identity_provider_id: providerId,
    })
  })

  it('refuses a user without the admin claim, creating no user and no session', async () => {
    const login = account(false)
    await expectRefused(await signIn(login), 'admin_claim_missing', login)
    const users = await ctx.json('GET', `/api/v1/users?search=${login}`)
    expect(users.body.total).toBe(0)
  })

  it('takes admin rights away from a provider-made admin whose claim is gone', async () => {
    const login = unique('sso')
    issuer.addAccount(login, { preferred_username: login, groups: ['palisade-admins'] })
    const first = await signIn(login)
    expect(first.status).toBe(200)
    issuer.addAccount(login, { preferred_username: login, groups: [] })
    await expectRefused(await signIn(login), 'admin_claim_missing', login)
    expect((await ctx.store.users.get(first.body.user.id)).is_admin).toBe(false)
  })

  it('never takes over a local admin of the same name (the break-glass account)', async () => {
    issuer.addAccount('admin', { preferred_username: 'admin', groups: ['palisade-admins'] })
    await expectRefused(await signIn('admin'), 'identity_mismatch', 'admin')
    // The local admin still signs in with its password.
    expect(await ctx.login('admin', PASSWORD)).toMatch(/\./)
  })

  it('refuses a state it never issued, and a state without its browser cookie', async () => {
    const login = account(true)
    const { url } = await start()
    const params = await signInAtProvider(url, login, REDIRECT_URI)
    await expectRefused(await callback(params, ''), 'state_invalid')
    const made = await start()
    const forged = new URLSearchParams({ state: 'not-a-state-palisade-issued', code: 'x' })
    await expectRefused(await callback(forged, made.cookie), 'state_invalid')
  })

  it('uses a state once: the same redirect posted again is refused', async () => {
    const login = account(true)
    const first = await signIn(login)
    expect(first.status).toBe(200)
    await expectRefused(await callback(first.params, first.cookie), 'state_invalid')
  })

  it('refuses a replayed authorization code under a new state', async () => {
    const login = account(true)
    const first = await signIn(login)
    expect(first.status).toBe(200)
    const again = await start()
    const state = new URL(again.url).searchParams.get('state') ?? ''
    const replay = new URLSearchParams(first.params)
    replay.set('state', state)
    await expectRefused(await callback(replay, again.cookie), 'code_refused')
  })

  it('refuses a sign-in that took longer than ten minutes', async () => {
    const login = account(true)
    const { url, cookie } = await start()
    const params = await signInAtProvider(url, login, REDIRECT_URI)
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 11 * 60_000 })
    try {
      await expectRefused(await callback(params, cookie), 'state_expired')
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses an ID token whose nonce is not the sign-in’s', async () => {
    const login = account(true)
    const { url, cookie } = await start()
    const tampered = new URL(url)
    tampered.searchParams.set('nonce', 'a-nonce-palisade-never-issued')
    const params = await signInAtProvider(tampered.href, login, REDIRECT_URI)
    await expectRefused(await callback(params, cookie), 'nonce_mismatch')
  })

  it('refuses the provider’s error answer (the user denied access)', async () => {
    const { url, cookie } = await start()
    const state = new URL(url).searchParams.get('state') ?? ''
    const denied = new URLSearchParams({ state, error: 'access_denied' })
    await expectRefused(await callback(denied, cookie), 'provider_error')
  })

  it('refuses an ID token issued for another client (wrong audience)', async () => {
    const login = account(true)
    issuer.misbehaviour = { issueFor: OTHER_CLIENT }
    try {
      await expectRefused(await signIn(login), 'token_wrong_audience')
    } finally {
      issuer.misbehaviour = {}
    }
  })

  it('refuses an ID token from another issuer (wrong issuer)', async () => {
    const login = account(true)
    issuer.misbehaviour = { delegateTo: elsewhere }
    try {
      await expectRefused(await signIn(login), 'token_wrong_issuer')
    } finally {
      issuer.misbehaviour = {}
    }
  })

  it('refuses an ID token that expired before it arrived', async () => {
    const login = account(true)
    issuer.idTokenTtlSeconds = 1
    issuer.misbehaviour = { tokenDelayMs: 2_100 }
    try {
      await expectRefused(await signIn(login), 'token_expired')
    } finally {
      issuer.idTokenTtlSeconds = 300
      issuer.misbehaviour = {}
    }
  })

  it('answers 404 for a provider without console sign-in', async () => {
    const other = await ctx.json('POST', '/api/v1/identity-providers', {
      body: { name: unique('idp'), issuer: `https://${unique('x')}.example.com`, client_id: 'c' },
    })
    const res = await ctx.json('POST', '/api/v1/auth/sso/start', {
      token: null,
      body: { provider_id: other.body.id },
    })
    expect(res.status).toBe(404)
  })

  it('refuses to enable console sign-in without an admin claim', async () => {
    const res = await ctx.json('POST', '/api/v1/identity-providers', {
      body: {
        name: unique('idp'),
        issuer: `https://${unique('x')}.example.com`,
        client_id: 'c',
        console_sign_in: true,
      },
    })
    expect(res.status).toBe(422)
    expect(res.body.error.details[0]).toMatchObject({ field: 'admin_claim', code: 'required' })
  })
})

describe('users linked to a provider subject ahead of their first sign-in', () => {
  it('links, shows, audits and unlinks, refusing a taken subject and an unknown provider', async () => {
    const user = await makeUser(ctx)
    const other = await makeUser(ctx)
    const path = `/api/v1/users/${user.id}/identity`
    expect((await ctx.json('GET', path)).status).toBe(404)
    const linked = await ctx.json('PUT', path, {
      body: { identity_provider_id: providerId, subject: 'subject-42' },
    })
    expect(linked.status).toBe(200)
    expect(linked.body).toMatchObject({
      identity_provider_id: providerId,
      subject: 'subject-42',
      admin_granted: false,
    })
    expect((await ctx.json('GET', path)).body.subject).toBe('subject-42')
    const audit = await ctx.json('GET', `/api/v1/audit/admin?resource_id=${user.id}`)
    expect(JSON.parse(audit.body.data[0].changes)).toEqual({
      before: { identity: null },
      after: { identity: { identity_provider_id: providerId, subject: 'subject-42' } },
    })
    const taken = await ctx.json('PUT', `/api/v1/users/${other.id}/identity`, {
      body: { identity_provider_id: providerId, subject: 'subject-42' },
    })
    expect(taken.status).toBe(409)
    const unknown = await ctx.json('PUT', `/api/v1/users/${other.id}/identity`, {
      body: { identity_provider_id: MISSING_ID, subject: 'x' },
    })
    expect(unknown.status).toBe(422)
    expect(unknown.body.error.details[0]).toMatchObject({
      field: 'identity_provider_id',
      code: 'not_found',
    })
    expect((await ctx.json('DELETE', path)).status).toBe(204)
    expect((await ctx.json('GET', path)).status).toBe(404)
  })

  it('signs the linked subject in as that user, and refuses another subject of the same name', async () => {
    const user = await makeUser(ctx)
    const subject = unique('idp-account')
    await ctx.json('PUT', `/api/v1/users/${user.id}/identity`, {
      body: { identity_provider_id: providerId, subject },
    })
    // The provider spells the name differently: the link, not the name, finds the user.
    issuer.addAccount(subject, {
      preferred_username: 'spelled-otherwise',
      groups: ['palisade-admins'],
    })
    const answer = await signIn(subject)
    expect(answer.status).toBe(200)
    expect(answer.body.user).toMatchObject({ id: user.id, is_admin: true })
    const impostor = unique('sso')
    issuer.addAccount(impostor, { preferred_username: user.username, groups: ['palisade-admins'] })
    await expectRefused(await signIn(impostor), 'identity_mismatch', user.username)
  })
})

describe('the failed-login throttle on console sign-in', () => {
  it('answers 429 to an address after repeated refused sign-ins, and only to that address', async () => {
    const strict = await setup({
      app: {
        logins: new LoginGuard(new LoginThrottle({ addressFailures: 3 }), (record) =>
          strict.store.logins.record(record),
        ),
      },
    })
    try {
      // app.request() has no socket: the address is the same for every request here, so a
      // second address is simulated by the throttle's own API below.
      const post = () =>
        strict.json('POST', '/api/v1/auth/sso/callback', {
          token: null,
          body: { state: 'never-issued', code: 'x' },
        })
      const answers: number[] = []
      for (let i = 0; i < 4; i++) answers.push((await post()).status)
      expect(answers).toEqual([401, 401, 401, 429])
      const throttled = await post()
      expect(throttled.status).toBe(429)
      expect(throttled.res.headers.get('retry-after')).toMatch(/^\d+$/)
    } finally {
      await strict.close()
    }
  })

  it('never locks out other addresses: failures that name no account count per address only', () => {
    const throttle = new LoginThrottle({ addressFailures: 3, accountFailures: 2 })
    for (let i = 0; i < 10; i++) throttle.failed('', `10.0.0.${i}`)
    expect(throttle.check('', '10.0.1.1').throttled).toBe(false)
  })
})
