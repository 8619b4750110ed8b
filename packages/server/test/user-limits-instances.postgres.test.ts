/**
 * Rate and concurrency limits shared by two instances on one PostgreSQL store
 * (docs/roles-and-access.md#limits): the counts live in the store, so a user cannot double their
 * allowance by connecting to both. Limits are set through A's admin API; the data planes run in
 * both pool modes.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger, createServer, type PalisadeServer } from '../src/index.js'
import { failure } from './fixtures/failure.js'
import { PASSWORD, type SeededShop, seedShop } from './fixtures/seed-store.js'
import { SHOP_SQL } from './fixtures/shop.js'

const url = process.env['PALISADE_TEST_PG_URL']
const OPS = { username: 'ops', password: 'Ops-Passw0rd!' }
const METRICS_TOKEN = 'limits-scraper-token-0123456789'

function withDatabase(base: string, name: string): string {
  const u = new URL(base)
  u.pathname = `/${name}`
  return u.toString()
}

for (const poolMode of ['session', 'transaction'] as const) {
  describe.skipIf(!url)(`limits shared by two instances on one store, ${poolMode} pooling`, () => {
    const suffix = `${process.pid}_${Date.now()}_${poolMode}`
    const storeDb = `palisade_lim_${suffix}`
    const shopDb = `palisade_lim_shop_${suffix}`
    const clients: pg.Client[] = []
    let admin: pg.Client
    let a: PalisadeServer
    let b: PalisadeServer
    let shop: SeededShop
    let token = ''

    const start = () =>
      createServer({
        databaseUrl: withDatabase(url as string, storeDb),
        secretKey: 'palisade-limits-instances-tests-only',
        jwtSecret: 'limits-instances-test-secret-0123456789abc',
        initialAdmin: OPS,
        dataPlane: { port: 0, poolMode },
        admin: { port: 0, metricsToken: METRICS_TOKEN },
        logger: createLogger({ level: 'silent' }),
      })

    async function connect(on: PalisadeServer, user: string): Promise<pg.Client> {
      const client = new pg.Client({
        host: '127.0.0.1',
        port: on.dataPlane.port,
        user,
        password: PASSWORD,
        database: 'shop',
      })
      client.on('error', () => {})
      clients.push(client)
      await client.connect()
      return client
    }

    async function api(method: string, path: string, body?: unknown) {
      const res = await fetch(`${a.admin.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: res.status, body: (await res.json()) as any }
    }

    /** A user with access to `shop` and the given limits, set through A's admin API. */
    async function userWith(limits: Record<string, number>) {
      const username = `lim_${Math.random().toString(36).slice(2, 8)}`
      const created = await api('POST', '/users', { username, password: PASSWORD })
      expect(created.status).toBe(201)
      const patched = await api('PATCH', `/users/${created.body.id}`, { limits })
      expect(patched.body.limits).toEqual(limits)
      return username
    }

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: url })
      await admin.connect()
      await admin.query(`CREATE DATABASE ${storeDb}`)
      await admin.query(`CREATE DATABASE ${shopDb}`)
      const seed = new pg.Client({ connectionString: withDatabase(url as string, shopDb) })
      await seed.connect()
      await seed.query(SHOP_SQL)
      await seed.end()
      a = await start()
      b = await start()
      const login = await fetch(`${a.admin.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(OPS),
      })
      token = ((await login.json()) as { token: string }).token
      const server = new URL(url as string)
      shop = await seedShop(a.store, {
        ds_type: 'postgres',
        pool_size: 6,
        pool_mode: poolMode,
        config: {
          host: server.hostname,
          port: Number(server.port || 5432),
          database: shopDb,
          username: decodeURIComponent(server.username || 'postgres'),
          password: server.password ? decodeURIComponent(server.password) : null,
          sslmode: 'disable',
        },
      })
      await a.store.access.setAll(shop.datasourceId, { enabled: true }, shop.admin.id)
    }, 60_000)

    afterAll(async () => {
      await Promise.allSettled(clients.map((c) => c.end()))
      await Promise.allSettled([a?.close(), b?.close()])
      if (admin) {
        await admin.query(`DROP DATABASE IF EXISTS ${storeDb} WITH (FORCE)`)
        await admin.query(`DROP DATABASE IF EXISTS ${shopDb} WITH (FORCE)`)
        await admin.end()
      }
    }, 30_000)

    it('refuses a statement on B while the user already runs their one statement on A', async () => {
      const username = await userWith({ max_concurrent_statements: 1 })
      const onA = await connect(a, username)
      const onB = await connect(b, username)
      const long = onA.query('SELECT count(*) AS n FROM generate_series(1, 8000000) g')
      await new Promise((r) => setTimeout(r, 200))
      const refused = (await onB.query('SELECT 1 AS one').catch((e) => e)) as pg.DatabaseError
      expect(refused.code).toBe('53400')
      expect(refused.detail).toContain('retry after 1 s')
      expect((await long).rows).toEqual([{ n: '8000000' }])
      // The slot was given back: B runs now, and A again.
      expect((await onB.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      expect((await onA.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }])
    })

    it('counts the statements of both instances against one per-minute limit', async () => {
      // Keep the four statements inside one minute of the store's clock.
      const { rows } = await admin.query('SELECT extract(second FROM now())::float8 AS s')
      if (rows[0].s > 50) await new Promise((r) => setTimeout(r, (61 - rows[0].s) * 1000))
      const username = await userWith({ max_statements_per_minute: 3 })
      const onA = await connect(a, username)
      const onB = await connect(b, username)
      await onA.query('SELECT 1')
      await onB.query('SELECT 2')
      await onA.query('SELECT 3')
      const refused = (await onB.query('SELECT 4').catch((e) => e)) as pg.DatabaseError
      expect(refused.code).toBe('53400')
      expect(refused.message).toBe(
        'too many statements: the limit is 3 per minute (max_statements_per_minute)',
      )
      expect(refused.detail).toMatch(
        /^The limit is reached for the current minute; retry after \d+ s\.$/,
      )
      expect((await failure(onA.query('SELECT $1::int', [5]))).code).toBe('53400')
      const metrics = await fetch(`${b.admin.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
      expect(await metrics.text()).toContain(
        'palisade_statements_limited_total{datasource="shop",limit="rate"} 1',
      )
    }, 30_000)

    it('admits exactly as many statements as the limit when both instances race', async () => {
      const user = await a.store.users.create(
        { username: `race_${Math.random().toString(36).slice(2, 8)}`, password: PASSWORD },
        shop.admin.id,
      )
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? a : b).store.statementCounters.enter(user.id, { concurrent: 2 }),
        ),
      )
      expect(answers.filter((x) => x.admitted)).toHaveLength(2)
    })

    it('shows the user limits and the effective limits through the admin API', async () => {
      const username = await userWith({ max_rows_per_statement: 2 })
      const users = await api('GET', `/users?search=${username}`)
      const id = users.body.data[0].id
      expect((await api('GET', `/users/${id}/effective-limits`)).body).toMatchObject({
        max_rows_per_statement: 2,
        on_row_limit: 'error',
      })
      const onB = await connect(b, username)
      expect((await failure(onB.query('SELECT g FROM generate_series(1, 5) g'))).code).toBe('54000')
    })
  })
}
