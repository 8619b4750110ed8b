/**
 * bench/proxy: the data plane's overhead. Direct upstream vs through the proxy for three policy
 * shapes (none; row filter + mask; join of two filtered tables), simple and extended protocol,
 * 1 and 8 clients, plus connect latency. Upstream: PostgreSQL when PALISADE_TEST_PG_URL is set
 * (a scratch database is created and dropped), else an embedded PGlite (whose "direct" column is
 * an in-process `db.query`, with no socket: a floor, not a fair peer). pgbouncer, when installed,
 * runs beside them as a reference (pgbouncer.ts).
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { idleConnections } from './idle-connections.js'
import { startPgbouncer } from './pgbouncer.js'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD, SETUP } from './proxy-fixture.js'
import { fmt, summarize } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const ITERATIONS = Number(process.env['BENCH_PROXY_ITERATIONS'] ?? 400)
/** Runs only the parts whose label ("row filter + mask extended 8", "idle", "connect") matches. */
const FILTER = new RegExp(process.env['BENCH_PROXY_FILTER'] ?? '')
/** Direct, pgbouncer and proxy take turns this many times: a slow spell hits all of them. */
const ROUNDS = Number(process.env['BENCH_PROXY_ROUNDS'] ?? 3)

interface Scenario {
  name: string
  user: string
  sql: string
  params: unknown[]
}

const scenarios: Scenario[] = [
  {
    name: 'no policy',
    user: 'plain',
    sql: 'SELECT id, amount FROM orders WHERE id = $1',
    params: [42],
  },
  {
    name: 'row filter + mask',
    user: 'alice',
    sql: 'SELECT id, name, email FROM customers WHERE id = $1',
    params: [43],
  },
  {
    name: 'join, 2 filtered',
    user: 'alice',
    sql: 'SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = $1',
    params: [43],
  },
]

type Runner = (sql: string, params: unknown[] | undefined) => Promise<unknown>
type RoundResult = Awaited<ReturnType<typeof measure>>

/** pgbouncer's view of the PostgreSQL upstream the proxy uses. */
function bouncerTarget(upstream: Record<string, unknown>) {
  return {
    host: String(upstream['host']),
    port: Number(upstream['port']),
    database: String(upstream['database']),
    user: String(upstream['user']),
  }
}

/** One round: every runner (client) runs the query ITERATIONS times after a warm-up. */
async function measure(runners: Runner[], sql: string, params: unknown[] | undefined) {
  const samples: number[] = []
  const started = process.hrtime.bigint()
  await Promise.all(
    runners.map(async (run) => {
      for (let i = 0; i < 20; i++) await run(sql, params)
      for (let i = 0; i < ITERATIONS; i++) {
        const t = process.hrtime.bigint()
        await run(sql, params)
        samples.push(Number(process.hrtime.bigint() - t) / 1e6)
      }
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { samples, qps: samples.length / seconds }
}

/** Latency over every round's samples; throughput as the median round's. */
interface Measured {
  median: number
  p95: number
  qps: number
}

function combine(rounds: Array<{ samples: number[]; qps: number }>): Measured {
  const qps = rounds.map((r) => r.qps).sort((a, b) => a - b)
  return {
    ...summarize(rounds.flatMap((r) => r.samples)),
    qps: qps[Math.floor(qps.length / 2)] ?? Number.NaN,
  }
}

/** Median time of the PBKDF2 a SCRAM-SHA-256 client runs once per connection. */
function scramKeyDerivationMs(): number {
  const samples: number[] = []
  for (let i = 0; i < 20; i++) {
    const t = process.hrtime.bigint()
    pbkdf2Sync(PASSWORD, randomBytes(16), 4096, 32, 'sha256')
    samples.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return summarize(samples).median
}

/** Inlines the parameter for the simple protocol (the bench's values are integers). */
const inline = (sql: string, params: unknown[]) => sql.replace('$1', String(params[0]))

export async function run(): Promise<void> {
  // First, while this process is still small: later runs leave memory the GC may return.
  if (FILTER.test('idle')) await idleConnections(1000)
  let db: PGlite | undefined
  let admin: pg.Client | undefined
  let directConfig: pg.ClientConfig | undefined
  let dbName = ''
  let upstream: Record<string, unknown> = { kind: 'pglite' }
  if (pgUrl) {
    const url = new URL(pgUrl)
    dbName = `palisade_bench_${process.pid}`
    admin = new pg.Client({ connectionString: pgUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${dbName}`)
    directConfig = { connectionString: pgUrl.replace(/\/[^/]*$/, `/${dbName}`) }
    const seed = new pg.Client(directConfig)
    await seed.connect()
    await seed.query(SETUP)
    await seed.end()
    upstream = {
      kind: 'postgres',
      datasourceName: 'bench',
      host: url.hostname,
      port: Number(url.port || 5432),
      database: dbName,
      user: decodeURIComponent(url.username || 'postgres'),
      password: url.password ? decodeURIComponent(url.password) : null,
      sslmode: 'disable',
      statementTimeoutMs: 0,
      poolSize: 16,
    }
  } else {
    db = await PGlite.create()
    await db.exec(SETUP)
  }
  // The proxy runs in its own process, as deployed: the clients below do not share its thread.
  const plane = await startProxyProcess(upstream)
  const proxyConfig = (user: string): pg.ClientConfig => ({
    host: '127.0.0.1',
    port: plane.port,
    user,
    password: PASSWORD,
    database: 'bench',
  })
  console.log(`upstream: ${pgUrl ? 'PostgreSQL' : 'PGlite (direct = in-process db.query)'}`)
  const bouncer =
    upstream['kind'] === 'postgres' ? await startPgbouncer(bouncerTarget(upstream)) : undefined
  const bouncerConfig = (): pg.ClientConfig | undefined =>
    bouncer && directConfig
      ? { host: '127.0.0.1', port: bouncer.port, user: String(upstream['user']), database: dbName }
      : undefined
  console.log(
    bouncer
      ? 'reference: pgbouncer (session pooling) in front of the same database'
      : 'reference: pgbouncer not installed (or no PostgreSQL upstream): its columns stay empty',
  )
  console.log(
    `${ROUNDS} rounds of ${ITERATIONS} queries per client; latency median / p95 in ms; ` +
      'q/s with its ratio to direct\n',
  )
  const rows: string[][] = []
  const clients: pg.Client[] = []
  const open = async (config: pg.ClientConfig) => {
    const c = new pg.Client(config)
    await c.connect()
    clients.push(c)
    return c
  }
  const runnerOf =
    (c: pg.Client): Runner =>
    (sql, params) =>
      params ? c.query(sql, params) : c.query(sql)
  try {
    for (const s of scenarios) {
      for (const protocol of ['simple', 'extended'] as const) {
        for (const n of [1, 8]) {
          if (!FILTER.test(`${s.name} ${protocol} ${n}`)) continue
          const proxy: Runner[] = []
          const direct: Runner[] = []
          const pooled: Runner[] = []
          const viaBouncer = bouncerConfig()
          for (let i = 0; i < n; i++) {
            proxy.push(runnerOf(await open(proxyConfig(s.user))))
            if (directConfig) direct.push(runnerOf(await open(directConfig)))
            else if (db) {
              const local = db
              direct.push((sql, params) => local.query(sql, params ?? []))
            }
            if (viaBouncer) pooled.push(runnerOf(await open(viaBouncer)))
          }
          // Direct and pgbouncer see the policy-free SQL: the ratio prices rewrite and relay.
          const sql = protocol === 'simple' ? inline(s.sql, s.params) : s.sql
          const params = protocol === 'simple' ? undefined : s.params
          const rounds = {
            direct: [] as RoundResult[],
            bouncer: [] as RoundResult[],
            proxy: [] as RoundResult[],
          }
          let cpu = 0
          for (let r = 0; r < ROUNDS; r++) {
            rounds.direct.push(await measure(direct, sql, params))
            if (pooled.length > 0) rounds.bouncer.push(await measure(pooled, sql, params))
            const cpuBefore = await plane.cpuMicros()
            rounds.proxy.push(await measure(proxy, sql, params))
            cpu += (await plane.cpuMicros()) - cpuBefore
          }
          const d = combine(rounds.direct)
          const b = rounds.bouncer.length > 0 ? combine(rounds.bouncer) : undefined
          const p = combine(rounds.proxy)
          const latency = (m: Measured | undefined) =>
            m ? `${fmt(m.median, 2)} / ${fmt(m.p95, 2)}` : '-'
          const throughput = (m: Measured | undefined) =>
            m ? `${fmt(m.qps, 0)} (${fmt(m.qps / d.qps, 2)}×)` : '-'
          rows.push([
            s.name,
            protocol,
            String(n),
            latency(d),
            latency(b),
            latency(p),
            b ? fmt((b.median - d.median) * 1000, 0) : '-',
            fmt((p.median - d.median) * 1000, 0),
            fmt(d.qps, 0),
            throughput(b),
            throughput(p),
            fmt(cpu / (ROUNDS * n * (ITERATIONS + 20)), 0),
          ])
          await Promise.all(clients.splice(0).map((c) => c.end()))
        }
      }
    }
    const connect = async (config: pg.ClientConfig) => {
      const samples: number[] = []
      for (let i = 0; i < 20; i++) {
        const t = process.hrtime.bigint()
        const c = new pg.Client(config)
        await c.connect()
        samples.push(Number(process.hrtime.bigint() - t) / 1e6)
        await c.end()
      }
      return summarize(samples)
    }
    const measureConnect = FILTER.test('connect')
    const proxyConnect = measureConnect ? await connect(proxyConfig('alice')) : undefined
    const directConnect = measureConnect && directConfig ? await connect(directConfig) : undefined
    const viaBouncer = bouncerConfig()
    const bouncerConnect = measureConnect && viaBouncer ? await connect(viaBouncer) : undefined
    const header = [
      'scenario',
      'protocol',
      'clients',
      'direct ms',
      'pgbouncer ms',
      'proxy ms',
      'pgbouncer +µs',
      'proxy +µs',
      'direct q/s',
      'pgbouncer q/s',
      'proxy q/s',
      'proxy CPU µs/q',
    ]
    console.log(`| ${header.join(' | ')} |`)
    console.log(`|${header.map(() => '---').join('|')}|`)
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
    if (proxyConnect) {
      console.log(
        `\nconnect (SCRAM, session compile, upstream bind): proxy ${fmt(proxyConnect.median, 2)} / ` +
          `${fmt(proxyConnect.p95, 2)} ms` +
          (directConnect
            ? `; direct ${fmt(directConnect.median, 2)} / ${fmt(directConnect.p95, 2)} ms (trust auth)`
            : '') +
          (bouncerConnect
            ? `; pgbouncer ${fmt(bouncerConnect.median, 2)} / ${fmt(bouncerConnect.p95, 2)} ms ` +
              `(trust auth${directConnect ? `, ${fmt(bouncerConnect.median / directConnect.median, 2)}× direct` : ''})`
            : ''),
      )
      // The client derives its SCRAM key (PBKDF2, 4096 rounds) for the proxy; trust auth skips it.
      const kdf = scramKeyDerivationMs()
      const proxyOwn = proxyConnect.median - kdf
      console.log(
        `client-side SCRAM key derivation: ${fmt(kdf, 2)} ms; proxy connect without it ` +
          `${fmt(proxyOwn, 2)} ms` +
          (directConnect ? ` (${fmt(proxyOwn / directConnect.median, 2)}× direct)` : ''),
      )
    }
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    await bouncer?.stop()
    await plane.stop()
    await db?.close()
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
      await admin.end()
    }
  }
}
