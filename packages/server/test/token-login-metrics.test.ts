import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger, createServer, type PalisadeServer } from '../src/index.js'
import { OidcIssuer } from './fixtures/oidc-issuer.js'
import { seedShop } from './fixtures/seed-store.js'

const METRICS_TOKEN = 'scraper-token-0123456789'

/**
 * Token logins of `palisade serve` (createServer): counted by outcome and timed in `/metrics`
 * (docs/operations.md, "Metrics"), and verified with the configured clock skew.
 */
describe('token logins of a served Palisade', () => {
  let server: PalisadeServer
  let idp: OidcIssuer

  beforeAll(async () => {
    idp = await OidcIssuer.start()
    server = await createServer({
      secretKey: 'metrics-tests-only-key-metrics-tests',
      jwtSecret: 'metrics-tests-only-secret-metrics-tests',
      // No skew, as `--token-clock-skew 0` sets it: a token is refused the moment it expires.
      dataPlane: { port: 0, tokenLogins: true, tokenClockSkewSeconds: 0 },
      admin: { port: 0, metricsToken: METRICS_TOKEN },
      logger: createLogger({ level: 'silent' }),
    })
    const { datasourceId, admin } = await seedShop(server.store, { ds_type: 'pglite', config: {} })
    await server.store.access.setAll(datasourceId, { enabled: true }, admin.id)
    await server.store.identityProviders.create(
      { name: 'acme', issuer: idp.issuer, client_id: 'palisade', jit_users: true },
      admin.id,
    )
  })
  afterAll(async () => {
    await server?.close()
    await idp?.close()
  })

  async function login(token: string): Promise<string | null> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'tokyo',
      password: token,
      database: 'shop',
    })
    try {
      await client.connect()
      await client.end()
      return null
    } catch (error) {
      return (error as { code?: string }).code ?? 'error'
    }
  }

  it('counts accepted and refused token logins and times them', async () => {
    const claims = { preferred_username: 'tokyo' }
    expect(await login(await idp.token(claims))).toBeNull()
    expect(await login(await idp.token(claims, { resource: 'urn:other' }))).toBe('28P01')
    const res = await fetch(`${server.admin.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    const text = await res.text()
    const value = (line: string) => Number(new RegExp(`^${line} (\\S+)$`, 'm').exec(text)?.[1])
    expect(value('palisade_token_logins_total\\{outcome="accepted"\\}')).toBe(1)
    expect(value('palisade_token_logins_total\\{outcome="refused"\\}')).toBe(1)
    expect(value('palisade_token_login_duration_seconds_count')).toBe(2)
    expect(text).toContain('# TYPE palisade_token_login_duration_seconds histogram')
    expect(
      value('palisade_login_failures_total\\{plane="data",reason="token_wrong_audience"\\}'),
    ).toBe(1)
  })

  it('verifies tokens with the configured clock skew', async () => {
    idp.ttlSeconds = 1
    const token = await idp.token({ preferred_username: 'tokyo' })
    idp.ttlSeconds = 300
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    // With the default 30 s skew this token would still be accepted.
    expect(await login(token)).toBe('28P01')
    await server.store.logins.flush()
    const [entry] = (await server.store.logins.list({ username: 'tokyo', page_size: 1 })).data
    expect(entry?.reason).toBe('token_expired')
  })
})
