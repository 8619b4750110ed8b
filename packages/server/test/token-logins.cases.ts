import { fileURLToPath } from 'node:url'
import type { IdentityProvider, LoginAuditEntry } from '@palisade/store'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LoginGuard } from '../src/logins/login-guard.js'
import { LoginThrottle } from '../src/logins/login-throttle.js'
import { findJava, findPsql, JDBC_JAR, run } from './compat/tools.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { OidcIssuer, type UserClaims } from './fixtures/oidc-issuer.js'
import { PASSWORD } from './fixtures/seed-store.js'
import { selfSignedPair } from './fixtures/self-signed.js'

const tls = selfSignedPair()
const psql = findPsql()
const java = findJava()
const JDBC_TOKEN_LOGIN = fileURLToPath(
  new URL('./compat/java/JdbcTokenLogin.java', import.meta.url),
)

const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
  )
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/**
 * Database logins with an identity provider's token (docs/sso.md), against a real OpenID
 * provider running in this process: every token below is issued and signed by it.
 */
export function runTokenLoginCases(name: string, makeHarness: MakeHarness): void {
  describe(`token logins, over ${name}`, () => {
    let h: Harness
    let idp: OidcIssuer
    let stranger: OidcIssuer
    let provider: IdentityProvider

    beforeAll(async () => {
      ;[idp, stranger] = await Promise.all([OidcIssuer.start(), OidcIssuer.start()])
      h = await makeHarness({
        plane: {
          tls,
          tokenLogins: true,
          // Tokens here live seconds: no tolerance, so expiry is exact.
          tokenClockSkewSeconds: 0,
          tokenSessionGraceSeconds: 0,
          issuerKeys: { jwksCooldownMs: 0 },
          logins: new LoginGuard(
            new LoginThrottle({ accountFailures: 3, addressFailures: 100, baseDelayMs: 2000 }),
            (record) => h.store.logins.record(record),
          ),
        },
      })
      const { store, shop } = h
      const a = shop.admin.id
      const readers = await store.roles.create({ name: 'sso-readers' }, a)
      const maskers = await store.roles.create({ name: 'sso-maskers' }, a)
      await store.access.setRoles(shop.datasourceId, { role_ids: [readers.id] }, a)
      const assign = (policyId: string, roleId: string) =>
        store.assignments.assign(
          shop.datasourceId,
          { policy_id: policyId, scope: 'role', role_id: roleId },
          a,
        )
      await assign(shop.policies.orders.id, readers.id)
      await assign(shop.policies.mask.id, maskers.id)
      provider = await store.identityProviders.create(
        {
          name: 'acme-sso',
          issuer: idp.issuer,
          client_id: 'palisade',
          audiences: ['palisade'],
          attribute_mappings: [{ claim: 'org_id', attribute: 'tenant' }],
          role_mappings: [
            { value: 'db-readers', role_id: readers.id },
            { value: 'email-masked', role_id: maskers.id },
          ],
          jit_users: true,
        },
        a,
      )
    })
    afterAll(async () => {
      await h?.close()
      await Promise.all([idp?.close(), stranger?.close()])
    })

    const user = (name: string, extra: Partial<UserClaims> = {}): UserClaims => ({
      preferred_username: name,
      org_id: 'globex',
      groups: ['db-readers'],
      ...extra,
    })
    const connect = (name: string, token: string) => h.connect(name, { password: token })

    /** The latest login-audit entry of a username. */
    async function lastLogin(username: string): Promise<LoginAuditEntry | undefined> {
      await h.store.logins.flush()
      return (await h.store.logins.list({ username, page_size: 1 })).data[0]
    }

    it('logs node-postgres in with a token, provisioning the user with its claimed tenant', async () => {
      const client = await connect('dave', await idp.token(user('dave')))
      const { rows } = await client.query('SELECT id FROM orders ORDER BY id')
      expect(rows).toEqual([{ id: 12 }, { id: 13 }])
      const dave = await h.store.users.findByUsername('dave')
      expect(dave?.attributes).toEqual({ tenant: 'globex' })
      const created = await h.store.audit.admin.list({ resource_id: dave?.id, action: 'create' })
      expect(JSON.parse(created.data[0]?.changes ?? '{}')).toMatchObject({
        identity_provider_id: provider.id,
      })
    })

    it('refreshes the tenant from the claims at the next login, audited', async () => {
      const acme = await connect('dave', await idp.token(user('dave', { org_id: 'acme' })))
      expect((await acme.query('SELECT id FROM orders ORDER BY id')).rows).toEqual([
        { id: 10 },
        { id: 11 },
      ])
      const dave = await h.store.users.findByUsername('dave')
      const updates = await h.store.audit.admin.list({ resource_id: dave?.id, action: 'update' })
      expect(JSON.parse(updates.data[0]?.changes ?? '{}')).toMatchObject({
        before: { attributes: { tenant: 'globex' } },
        after: { attributes: { tenant: 'acme' } },
      })
    })

    it('grants a role and its policy from a groups claim, and takes them away with it', async () => {
      const masked = await connect(
        'erin',
        await idp.token(user('erin', { groups: ['db-readers', 'email-masked'] })),
      )
      const emails = await masked.query('SELECT DISTINCT email FROM customers')
      expect(emails.rows).toEqual([{ email: '***' }])
      const plain = await connect('erin', await idp.token(user('erin')))
      expect((await plain.query('SELECT email FROM customers WHERE id = 3')).rows).toEqual([
        { email: 'cid@globex.test' },
      ])
      // Without the readers group there is no access to the datasource at all.
      const none = await failure(connect('erin', await idp.token(user('erin', { groups: [] }))))
      expect(none).toMatchObject({ code: '3D000' })
    })

    it.skipIf(!tls)('logs in with a token over TLS', async () => {
      const client = await h.connect('tess', {
        password: await idp.token(user('tess')),
        ssl: { rejectUnauthorized: false },
      })
      expect((await client.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
    })

    it.skipIf(!psql.ok)('logs psql in with a token in PGPASSWORD', async () => {
      const token = await idp.token(user('uma'))
      const port = String(h.plane.port)
      const sql = 'SELECT count(*) FROM orders'
      const out = await run(
        psql.ok ? psql.command : 'psql',
        ['-X', '-A', '-t', '-h', '127.0.0.1', '-p', port, '-U', 'uma', '-d', 'shop', '-c', sql],
        { PGPASSWORD: token, PGSSLMODE: 'disable' },
      )
      expect(out.stderr).toBe('')
      expect(out.stdout.trim()).toBe('2')
    })

    it.skipIf(!java.ok)(
      'logs pgjdbc in with a token as its password, and refuses one for another audience',
      async () => {
        const token = await idp.token(user('vera'))
        const refused = await idp.token(user('vera'), { resource: 'urn:other' })
        const port = String(h.plane.port)
        const out = await run(
          java.ok ? java.command : 'java',
          ['-cp', JDBC_JAR, JDBC_TOKEN_LOGIN, '127.0.0.1', port, 'shop', 'vera'],
          { PALISADE_TOKEN: token, PALISADE_REFUSED_TOKEN: refused },
        )
        expect(out.stdout.trim().split('\n')).toEqual(['ok 2', 'error 28P01'])
        expect((await lastLogin('vera'))?.reason).toBe('token_wrong_audience')
      },
      60_000,
    )

    it('logs a user linked ahead in only with the linked subject', async () => {
      const a = h.shop.admin.id
      const wendy = await h.store.users.create({ username: 'wendy', password: PASSWORD }, a)
      await h.store.identityProviders.links.link(
        wendy.id,
        { identity_provider_id: provider.id, subject: 'someone-else' },
        a,
      )
      expect(await failure(connect('wendy', await idp.token(user('wendy'))))).toMatchObject({
        code: '28P01',
      })
      expect((await lastLogin('wendy'))?.reason).toBe('identity_mismatch')
      // The fixture's subject of a user is its client id at the provider.
      await h.store.identityProviders.links.link(
        wendy.id,
        { identity_provider_id: provider.id, subject: 'user-wendy' },
        a,
      )
      const client = await connect('wendy', await idp.token(user('wendy')))
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    })

    it('ends an open session at its first statement after the token expired', async () => {
      idp.ttlSeconds = 2
      const token = await idp.token(user('frank'))
      idp.ttlSeconds = 300
      const client = await connect('frank', token)
      expect((await client.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      const exp = decodeJwt(token).exp as number
      await sleep(exp * 1000 - Date.now() + 100)
      expect(await failure(client.query('SELECT count(*)::int AS n FROM orders'))).toEqual({
        code: '08006',
        message: 'session token expired - please reconnect with a new token',
      })
    })

    it('accepts tokens signed with a rotated key, fetching the new JWKS', async () => {
      const before = await idp.token(user('gina'))
      await (await connect('gina', before)).query('SELECT 1')
      await idp.rotateKeys()
      const after = await idp.token(user('gina'))
      expect(decodeProtectedHeader(after).kid).not.toBe(decodeProtectedHeader(before).kid)
      expect((await (await connect('gina', after)).query('SELECT 1 AS one')).rows).toEqual([
        { one: 1 },
      ])
    })

    describe('refusals: 28P01 for the client, the reason in the login audit', () => {
      async function refused(username: string, token: string, reason: string): Promise<void> {
        expect(await failure(connect(username, token))).toEqual({
          code: '28P01',
          message: `password authentication failed for user "${username}"`,
        })
        expect(await lastLogin(username)).toMatchObject({
          plane: 'data',
          outcome: 'failed',
          reason,
        })
        expect(JSON.stringify(await lastLogin(username))).not.toContain(token.slice(-20))
      }

      it('an expired token', async () => {
        idp.ttlSeconds = 1
        const token = await idp.token(user('henry'))
        idp.ttlSeconds = 300
        await sleep((decodeJwt(token).exp as number) * 1000 - Date.now() + 100)
        await refused('henry', token, 'token_expired')
      })

      it('a token of an issuer that is not configured', async () => {
        await refused('ivan', await stranger.token(user('ivan')), 'unknown_issuer')
      })

      it('a token for another audience', async () => {
        const token = await idp.token(user('judy'), { resource: 'urn:other' })
        await refused('judy', token, 'token_wrong_audience')
      })

      it('a token whose claims were changed after signing', async () => {
        const [header, payload, signature] = (await idp.token(user('kate'))).split('.')
        const claims = { ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) }
        const forged = `${header}.${b64({ ...claims, org_id: 'acme' })}.${signature}`
        await refused('kate', forged, 'token_bad_signature')
      })

      it('an unsigned token (alg none)', async () => {
        const [, payload] = (await idp.token(user('liam'))).split('.')
        await refused(
          'liam',
          `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
          'token_algorithm_refused',
        )
      })

      it('a token naming a key the provider never published', async () => {
        const [header, payload, signature] = (await idp.token(user('mona'))).split('.')
        const parsed = JSON.parse(Buffer.from(header ?? '', 'base64url').toString())
        const forged = `${b64({ ...parsed, kid: 'no-such-key' })}.${payload}.${signature}`
        await refused('mona', forged, 'token_unknown_key')
      })

      it('a token of one user presented as another', async () => {
        await refused('nina', await idp.token(user('oscar')), 'username_mismatch')
      })

      it('a token too large to be one, before any parsing', async () => {
        const [header, payload, signature] = (await idp.token(user('vera'))).split('.')
        const padded = `${header}.${payload}${'A'.repeat(20_000)}.${signature}`
        await refused('vera', padded, 'too_long')
      })

      it('a token whose claims have the wrong types', async () => {
        const [header, payload, signature] = (await idp.token(user('walt'))).split('.')
        const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString())
        const odd = `${header}.${b64({ ...claims, exp: 'never', aud: { x: 1 } })}.${signature}`
        expect(await failure(connect('walt', odd))).toMatchObject({ code: '28P01' })
        expect((await lastLogin('walt'))?.reason).toMatch(/^token_/)
      })

      it('throttles repeated bad tokens like wrong passwords', async () => {
        const bad = await stranger.token(user('pat'))
        for (let i = 0; i < 3; i++) await failure(connect('pat', bad))
        const good = await idp.token(user('pat'))
        expect(await failure(connect('pat', good))).toMatchObject({ code: '28P01' })
        expect(await lastLogin('pat')).toMatchObject({
          outcome: 'throttled',
          reason: 'throttled_account',
        })
      })
    })

    it('keeps password users working, with their password checked against its verifier', async () => {
      const alice = await h.connect('alice')
      expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      expect(await failure(h.connect('alice', { password: `${PASSWORD}x` }))).toMatchObject({
        code: '28P01',
      })
      expect(await lastLogin('alice')).toMatchObject({ reason: 'wrong_password' })
    })
  })
}
