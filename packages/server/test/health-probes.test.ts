import { createServer as createTcpServer } from 'node:net'
import type { Store } from '@palisade/store'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Readiness } from '../src/health/readiness.js'
import { createLogger, createServer, type PalisadeServer } from '../src/index.js'
import { codeOf } from './fixtures/failure.js'
import { PASSWORD, seedShop } from './fixtures/seed-store.js'
import { createTestStore, storeSnapshot } from './fixtures/snapshots.js'

const METRICS_TOKEN = 'probe-scraper-token-0123456789'
const SECRETS = {
  secretKey: 'probe-tests-only-key-probe-tests-only',
  jwtSecret: 'probe-tests-only-secret-probe-tests-only',
}

async function startServer(databaseUrl?: string): Promise<PalisadeServer> {
  return createServer({
    ...SECRETS,
    ...(databaseUrl ? { databaseUrl } : { storeSnapshot: await storeSnapshot() }),
    dataPlane: { port: 0 },
    admin: { port: 0, metricsToken: METRICS_TOKEN },
    logger: createLogger({ level: 'silent' }),
  })
}

async function probe(server: PalisadeServer, path: '/health' | '/ready') {
  const res = await fetch(`${server.admin.url}${path}`)
  return { status: res.status, body: (await res.json()) as any }
}

/** The value of each unlabelled sample, and of `palisade_upstream_reachable` by datasource. */
async function probeGauges(server: PalisadeServer) {
  const res = await fetch(`${server.admin.url}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  })
  const text = await res.text()
  const value = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)
    return m ? Number(m[1]) : undefined
  }
  const upstreams: Record<string, number> = {}
  for (const m of text.matchAll(/^palisade_upstream_reachable\{datasource="([^"]*)"\} (\S+)$/gm)) {
    upstreams[m[1] as string] = Number(m[2])
  }
  return {
    ready: value('palisade_ready'),
    store: value('palisade_store_up'),
    feed: value('palisade_change_feed_live'),
    upstreams,
  }
}

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const server = createTcpServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

function client(server: PalisadeServer, user: string): pg.Client {
  const c = new pg.Client({
    host: '127.0.0.1',
    port: server.dataPlane.port,
    user,
    password: PASSWORD,
    database: 'shop',
  })
  c.on('error', () => {})
  return c
}

describe('GET /health and GET /ready (embedded store)', () => {
  let server: PalisadeServer
  beforeAll(async () => {
    server = await startServer()
    await seedShop(server.store, { ds_type: 'pglite', config: {} })
  })
  afterAll(() => server?.close())

  it('answers liveness and readiness without a token, before any datasource is used', async () => {
    expect(await probe(server, '/health')).toEqual({
      status: 200,
      body: { status: 'ok', version: expect.any(String) },
    })
    expect(await probe(server, '/ready')).toEqual({
      status: 200,
      body: {
        status: 'ready',
        version: expect.any(String),
        reasons: [],
        store: 'ok',
        change_feed: 'live',
        datasources: [],
      },
    })
    expect(await probeGauges(server)).toEqual({ ready: 1, store: 1, feed: 1, upstreams: {} })
  })

  it('lists a used datasource as reachable, by name only', async () => {
    const alice = client(server, 'alice')
    await alice.connect()
    try {
      expect((await alice.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    } finally {
      await alice.end()
    }
    const { status, body } = await probe(server, '/ready')
    expect(status).toBe(200)
    expect(body.datasources).toEqual([{ name: 'shop', upstream: 'reachable' }])
    expect((await probeGauges(server)).upstreams).toEqual({ shop: 1 })
  })

  it('stays live but not ready once the store is gone', async () => {
    await server.store.close()
    expect((await probe(server, '/health')).status).toBe(200)
    const { status, body } = await probe(server, '/ready')
    expect(status).toBe(503)
    expect(body).toMatchObject({
      status: 'not_ready',
      reasons: ['the store is unreachable', 'the change feed is down'],
      store: 'unreachable',
      change_feed: 'down',
      datasources: [{ name: 'shop', upstream: 'reachable' }],
    })
    expect(await probeGauges(server)).toEqual({
      ready: 0,
      store: 0,
      feed: 0,
      upstreams: { shop: 1 },
    })
  })
})

describe('an unreachable upstream', () => {
  it('is listed as unreachable without making the instance unready or showing its address', async () => {
    const server = await startServer()
    try {
      const port = await closedPort()
      await seedShop(server.store, {
        ds_type: 'postgres',
        config: {
          host: '127.0.0.1',
          port,
          database: 'shop',
          username: 'palisade',
          password: 'upstream-Secret-1',
          sslmode: 'disable',
        },
      })
      expect(await codeOf(client(server, 'alice').connect())).toBe('08006')
      const res = await fetch(`${server.admin.url}/ready`)
      const text = await res.text()
      expect(res.status).toBe(200)
      expect(JSON.parse(text).datasources).toEqual([{ name: 'shop', upstream: 'unreachable' }])
      for (const secret of [String(port), 'upstream-Secret-1', 'palisade', '127.0.0.1']) {
        expect(text).not.toContain(secret)
      }
      expect((await probeGauges(server)).upstreams).toEqual({ shop: 0 })
    } finally {
      await server.close()
    }
  })
})

describe('Readiness', () => {
  let store: Store
  beforeAll(async () => {
    store = await createTestStore({ secretKey: SECRETS.secretKey })
  })
  afterAll(() => store?.close())

  it('counts a store read slower than the timeout as unreachable', async () => {
    const hanging = {
      ...store,
      users: { ...store.users, list: () => new Promise<never>(() => {}) },
    } as unknown as Store
    const started = performance.now()
    const report = await new Readiness({ store: hanging, storeTimeoutMs: 50 }).check()
    expect(performance.now() - started).toBeLessThan(1000)
    expect(report).toMatchObject({ ready: false, store: 'unreachable', changeFeed: 'live' })
    expect(report.reasons).toEqual(['the store is unreachable'])
  })

  it('shares one check between callers that ask at the same time', async () => {
    let reads = 0
    const counting = {
      ...store,
      users: {
        list: () => {
          reads++
          return store.users.list({ page_size: 1 })
        },
      },
    } as unknown as Store
    const readiness = new Readiness({ store: counting })
    const [a, b] = await Promise.all([readiness.check(), readiness.check()])
    expect(a).toBe(b)
    expect(reads).toBe(1)
    await readiness.check()
    expect(reads).toBe(2)
  })
})

const pgUrl = process.env['PALISADE_TEST_PG_URL']

describe.skipIf(!pgUrl)('GET /ready on a PostgreSQL store (PALISADE_TEST_PG_URL)', () => {
  const storeDb = `palisade_ready_${process.pid}`
  let admin: pg.Client
  let server: PalisadeServer

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: pgUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${storeDb}`)
    const url = new URL(pgUrl as string)
    url.pathname = `/${storeDb}`
    server = await startServer(url.toString())
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await admin?.query(`DROP DATABASE IF EXISTS ${storeDb} WITH (FORCE)`)
    await admin?.end()
  })

  it('is ready while its change listener is subscribed, and not once the store is gone', async () => {
    expect(server.store.changes.live).toBe(true)
    expect(await probe(server, '/ready')).toMatchObject({
      status: 200,
      body: { status: 'ready', store: 'ok', change_feed: 'live' },
    })
    await server.store.close()
    expect(server.store.changes.live).toBe(false)
    const gone = await probe(server, '/ready')
    expect(gone.status).toBe(503)
    expect(gone.body.reasons).toEqual(['the store is unreachable', 'the change feed is down'])
    expect((await probe(server, '/health')).status).toBe(200)
  })
})
