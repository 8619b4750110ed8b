/**
 * bench/proxy: the data plane's overhead. Direct upstream vs through the proxy for three policy
 * shapes (none; row filter + mask; join of two filtered tables), simple and extended protocol,
 * 1 and 8 clients, plus connect latency. Upstream: PostgreSQL when PALISADE_TEST_PG_URL is set
 * (a scratch database is created and dropped), else an embedded PGlite (whose "direct" column is
 * an in-process `db.query`, with no socket: a floor, not a fair peer).
 */
import { spawn } from 'node:child_process'
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { PASSWORD, SETUP } from './proxy-fixture.js'
import { fmt, summarize } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const ITERATIONS = Number(process.env['BENCH_PROXY_ITERATIONS'] ?? 400)

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
  return { ...summarize(samples), qps: samples.length / seconds }
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

/** A proxy in its own process (proxy-process.ts): its port, its RSS on demand, and a stop. */
async function startProxyProcess(upstream: Record<string, unknown>) {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      ...(process.env['BENCH_PROXY_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
      '--import',
      'tsx',
      new URL('./proxy-process.ts', import.meta.url).pathname,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_PROXY_UPSTREAM: JSON.stringify(upstream) },
    },
  )
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () =>
    JSON.parse(String((await lines.next()).value)) as { port: number; rss: number }
  const { port } = await next()
  return {
    port,
    async rss() {
      child.stdin.write('rss\n')
      return (await next()).rss
    },
    /** Ends the proxy process (closing stdin lets it exit normally), killing it if it hangs. */
    async stop() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.stdin.end()
      const timer = setTimeout(() => child.kill(), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}

/**
 * RSS of a proxy holding `count` idle client connections: the proxy runs alone in a child
 * process over an embedded PGlite upstream, which has no session limit.
 */
async function idleConnections(count: number): Promise<void> {
  const proxy = await startProxyProcess({ kind: 'pglite' })
  const clients: pg.Client[] = []
  const open = async (port: number, n: number) => {
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: Math.min(50, n - i) }, () => {
        const c = new pg.Client({
          host: '127.0.0.1',
          port,
          user: 'alice',
          password: PASSWORD,
          database: 'bench',
        })
        clients.push(c)
        return c.connect()
      })
      await Promise.all(batch)
    }
  }
  const { port } = proxy
  try {
    // The slope between 100 and `count` connections: PGlite's start-up memory, which the
    // process returns over its first seconds, does not distort it.
    await open(port, 100)
    const first = await proxy.rss()
    await open(port, count - 100)
    await clients[0]?.query('SELECT 1')
    const held = await proxy.rss()
    const perConnection = (held - first) / (count - 100) / 1024
    console.log(
      `${count} idle connections: proxy RSS ${fmt(held / 1024 / 1024, 0)} MB, ` +
        `${fmt(perConnection, 0)} KB per connection ` +
        `(${fmt((perConnection * count) / 1024, 0)} MB for ${count}; the rest is Node, PGlite and QuickJS)\n`,
    )
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    await proxy.stop()
  }
}

/** Inlines the parameter for the simple protocol (the bench's values are integers). */
const inline = (sql: string, params: unknown[]) => sql.replace('$1', String(params[0]))

export async function run(): Promise<void> {
  // First, while this process is still small: later runs leave memory the GC may return.
  await idleConnections(1000)
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
  console.log(`${ITERATIONS} queries per client; latency median / p95 in ms\n`)
  const rows: string[][] = []
  const clients: pg.Client[] = []
  const open = async (config: pg.ClientConfig) => {
    const c = new pg.Client(config)
    await c.connect()
    clients.push(c)
    return c
  }
  try {
    for (const s of scenarios) {
      for (const protocol of ['simple', 'extended'] as const) {
        for (const n of [1, 8]) {
          const proxy: Runner[] = []
          const direct: Runner[] = []
          for (let i = 0; i < n; i++) {
            const p = await open(proxyConfig(s.user))
            proxy.push((sql, params) => (params ? p.query(sql, params) : p.query(sql)))
            if (directConfig) {
              const d = await open(directConfig)
              direct.push((sql, params) => (params ? d.query(sql, params) : d.query(sql)))
            } else if (db) {
              const local = db
              direct.push((sql, params) => local.query(sql, params ?? []))
            }
          }
          // The direct run sees the policy-free SQL: the ratio prices rewrite and relay together.
          const sql = protocol === 'simple' ? inline(s.sql, s.params) : s.sql
          const params = protocol === 'simple' ? undefined : s.params
          const d = await measure(direct, sql, params)
          const p = await measure(proxy, sql, params)
          rows.push([
            s.name,
            protocol,
            String(n),
            `${fmt(d.median, 2)} / ${fmt(d.p95, 2)}`,
            `${fmt(p.median, 2)} / ${fmt(p.p95, 2)}`,
            fmt(p.median / d.median, 1),
            fmt(d.qps, 0),
            fmt(p.qps, 0),
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
    const proxyConnect = await connect(proxyConfig('alice'))
    const directConnect = directConfig ? await connect(directConfig) : undefined
    const header = [
      'scenario',
      'protocol',
      'clients',
      'direct ms',
      'proxy ms',
      'ratio',
      'direct q/s',
      'proxy q/s',
    ]
    console.log(`| ${header.join(' | ')} |`)
    console.log(`|${header.map(() => '---').join('|')}|`)
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
    console.log(
      `\nconnect (SCRAM, session compile, upstream bind): proxy ${fmt(proxyConnect.median, 2)} / ` +
        `${fmt(proxyConnect.p95, 2)} ms` +
        (directConnect
          ? `; direct ${fmt(directConnect.median, 2)} / ${fmt(directConnect.p95, 2)} ms (trust auth)`
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
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    await plane.stop()
    await db?.close()
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
      await admin.end()
    }
  }
}
