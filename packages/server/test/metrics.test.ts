import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger, createServer, type PalisadeServer } from '../src/index.js'
import { codeOf } from './fixtures/failure.js'
import { adminLogin } from './fixtures/login-clients.js'
import { PASSWORD, seedShop } from './fixtures/seed-store.js'

const METRICS_TOKEN = 'scraper-token-0123456789'

/** One sample of the exposition format: name, labels and value. */
interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/**
 * Parses Prometheus text exposition format 0.0.4 strictly: every line is a comment (`# HELP`,
 * `# TYPE` with a known type) or a sample `name{label="value",…} number`; anything else fails.
 */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  const sample =
    /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (-?(?:[0-9.e+-]+|Inf|NaN|\+Inf))(?: -?\d+)?$/
  for (const line of text.split('\n')) {
    if (line === '') continue
    const type =
      /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      types.set(type[1] as string, type[2] as string)
      continue
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue
    const m = sample.exec(line)
    if (!m) throw new Error(`not exposition format: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, key, value] of (m[2] ?? '').matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
    )) {
      labels[key as string] = value as string
    }
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) })
  }
  return { samples, types }
}

/** The value of one sample; undefined when absent. */
function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value
}

describe('Prometheus metrics at GET /metrics', () => {
  let server: PalisadeServer
  let alice: pg.Client
  beforeAll(async () => {
    server = await createServer({
      secretKey: 'metrics-tests-only-key-metrics-tests',
      jwtSecret: 'metrics-tests-only-secret-metrics-tests',
      dataPlane: { port: 0 },
      admin: { port: 0, metricsToken: METRICS_TOKEN },
      logger: createLogger({ level: 'silent' }),
    })
    await seedShop(server.store, { ds_type: 'pglite', config: {} })
    alice = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'alice',
      password: PASSWORD,
      database: 'shop',
    })
    await alice.connect()
  })
  afterAll(async () => {
    await alice?.end()
    await server?.close()
  })

  const scrape = (authorization?: string) =>
    fetch(`${server.admin.url}/metrics`, {
      headers: authorization ? { authorization } : {},
    })

  it('is refused without the metrics token or an admin token', async () => {
    expect((await scrape()).status).toBe(401)
    expect((await scrape('Bearer not-the-token-at-all')).status).toBe(401)
    const carol = await adminLogin(server, 'carol', PASSWORD)
    expect(carol.status).toBe(403)
  })

  it('counts statements, logins and refusals, and reads pools, queues and caches at scrape time', async () => {
    await alice.query('SELECT 1 AS one')
    await alice.query('SELECT 2 AS two')
    expect(await codeOf(alice.query('SELECT 1/0'))).toBe('22012')
    const wrong = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'alice',
      password: 'Wrong-passw0rd!',
      database: 'shop',
    })
    wrong.on('error', () => {})
    expect(await codeOf(wrong.connect())).toBe('28P01')
    expect((await adminLogin(server, 'ghost', 'Wrong-passw0rd!')).status).toBe(401)

    const res = await scrape(`Bearer ${METRICS_TOKEN}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const { samples, types } = parseExposition(await res.text())
    expect(
      sampleValue(samples, 'palisade_statements_total', { status: 'success', datasource: 'shop' }),
    ).toBeGreaterThanOrEqual(2)
    expect(
      sampleValue(samples, 'palisade_statements_total', { status: 'error', datasource: 'shop' }),
    ).toBe(1)
    expect(
      sampleValue(samples, 'palisade_statement_duration_seconds_count', { datasource: 'shop' }),
    ).toBeGreaterThanOrEqual(3)
    expect(types.get('palisade_statement_duration_seconds')).toBe('histogram')
    expect(sampleValue(samples, 'palisade_rewrite_duration_seconds_count')).toBeGreaterThanOrEqual(
      3,
    )
    const cache = ['hit', 'template', 'miss'].map(
      (result) => sampleValue(samples, 'palisade_rewrite_cache_total', { result }) ?? Number.NaN,
    )
    expect(cache.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(3)
    expect(sampleValue(samples, 'palisade_client_sessions')).toBe(1)
    expect(
      sampleValue(samples, 'palisade_client_connections_refused_total', { reason: 'auth_failed' }),
    ).toBe(1)
    expect(
      sampleValue(samples, 'palisade_login_failures_total', {
        plane: 'data',
        reason: 'wrong_password',
      }),
    ).toBe(1)
    expect(
      sampleValue(samples, 'palisade_login_failures_total', {
        plane: 'admin',
        reason: 'unknown_user',
      }),
    ).toBe(1)
    expect(sampleValue(samples, 'palisade_query_audit_queue')).toBeGreaterThanOrEqual(0)
    expect(sampleValue(samples, 'palisade_query_audit_rows_total', { result: 'dropped' })).toBe(0)
    expect(sampleValue(samples, 'palisade_decision_evaluations_total')).toBeGreaterThanOrEqual(0)
    expect(sampleValue(samples, 'palisade_process_resident_memory_bytes')).toBeGreaterThan(0)
    // An admin's own API token may scrape too.
    const admin = await adminLogin(server, 'admin', PASSWORD)
    const token = (admin.body as { token: string }).token
    expect((await scrape(`Bearer ${token}`)).status).toBe(200)
  })

  it('is in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${server.admin.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, unknown>
    }
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/metrics', '/api/v1/audit/logins', '/api/v1/login-throttles']),
    )
  })
})

const pgUrl = process.env['PALISADE_TEST_PG_URL']

describe.skipIf(!pgUrl)('metrics of a PostgreSQL upstream pool (PALISADE_TEST_PG_URL)', () => {
  it('shows busy and idle upstream sessions and waiting clients per datasource', async () => {
    const url = new URL(pgUrl as string)
    const server = await createServer({
      secretKey: 'metrics-tests-only-key-metrics-tests',
      jwtSecret: 'metrics-tests-only-secret-metrics-tests',
      dataPlane: { port: 0, poolMode: 'session' },
      admin: { port: 0, metricsToken: METRICS_TOKEN },
      logger: createLogger({ level: 'silent' }),
    })
    const clients: pg.Client[] = []
    try {
      await seedShop(server.store, {
        ds_type: 'postgres',
        config: {
          host: url.hostname,
          port: Number(url.port || 5432),
          database: url.pathname.slice(1) || 'postgres',
          username: decodeURIComponent(url.username || 'postgres'),
          sslmode: 'disable',
        },
        pool_size: 3,
        pool_mode: 'session',
      })
      for (let i = 0; i < 2; i++) {
        const c = new pg.Client({
          host: '127.0.0.1',
          port: server.dataPlane.port,
          user: 'carol',
          password: PASSWORD,
          database: 'shop',
        })
        await c.connect()
        expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
        clients.push(c)
      }
      const res = await fetch(`${server.admin.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
      const { samples } = parseExposition(await res.text())
      const busy = sampleValue(samples, 'palisade_upstream_sessions', {
        datasource: 'shop',
        state: 'busy',
      })
      const idle = sampleValue(samples, 'palisade_upstream_sessions', {
        datasource: 'shop',
        state: 'idle',
      })
      expect(busy).toBe(2)
      expect((busy ?? 0) + (idle ?? 0)).toBeLessThanOrEqual(3)
      expect(
        sampleValue(samples, 'palisade_upstream_waiting_clients', { datasource: 'shop' }),
      ).toBe(0)
      expect(sampleValue(samples, 'palisade_client_sessions')).toBe(2)
    } finally {
      for (const c of clients) await c.end()
      await server.close()
    }
  })
})
