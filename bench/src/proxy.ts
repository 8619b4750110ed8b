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
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.js'
import { fmt, printTable, summarize } from './stats.js'

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

/** What the clients of one column connect to. */
interface Target {
  name: string
  /** How to connect (by the scenario's user); undefined when the target is absent. */
  config: (user: string) => pg.ClientConfig | undefined
  /** Direct on PGlite: the in-process database instead of a connection. */
  local?: PGlite | undefined
  /** CPU time of the target's process, for the per-query figure. */
  cpuMicros?: (() => Promise<number>) | undefined
}

const runnerOf =
  (c: pg.Client): Runner =>
  (sql, params) =>
    params ? c.query(sql, params) : c.query(sql)

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
  let scratch: ScratchDatabase | undefined
  let directConfig: pg.ClientConfig | undefined
  let dbName = ''
  let upstream: Record<string, unknown> = { kind: 'pglite' }
  if (pgUrl) {
    scratch = await createScratchDatabase(pgUrl)
    dbName = scratch.name
    directConfig = scratch.direct
    upstream = scratch.upstream
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
  // The references need a PostgreSQL upstream to stand in front of.
  const postgres = upstream['kind'] === 'postgres' && directConfig ? directConfig : undefined
  const bouncer = postgres ? await startPgbouncer(bouncerTarget(upstream)) : undefined
  const relay = postgres ? await startProxyProcess(upstream, 'node-relay-process.ts') : undefined
  const referenceConfig = (port: number): pg.ClientConfig => ({
    host: '127.0.0.1',
    port,
    user: String(upstream['user']),
    database: dbName,
  })
  console.log(
    `references: ${bouncer ? 'pgbouncer (session pooling)' : 'no pgbouncer (not installed)'}, ` +
      `${relay ? 'a bare Node.js relay (node-relay-process.ts)' : 'no Node.js relay (PGlite upstream)'}`,
  )
  console.log(
    `${ROUNDS} rounds of ${ITERATIONS} queries per client, the targets taking turns; ` +
      'direct and the references run the policy-free SQL\n',
  )
  const targets: Target[] = [
    { name: 'direct', config: () => postgres, local: db },
    { name: 'pgbouncer', config: () => (bouncer ? referenceConfig(bouncer.port) : undefined) },
    {
      name: 'Node relay',
      config: () => (relay ? referenceConfig(relay.port) : undefined),
      cpuMicros: relay?.cpuMicros,
    },
    { name: 'Palisade', config: proxyConfig, cpuMicros: plane.cpuMicros },
  ]
  const latencyRows: string[][] = []
  const throughputRows: string[][] = []
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
          if (!FILTER.test(`${s.name} ${protocol} ${n}`)) continue
          const runners = new Map<Target, Runner[]>()
          for (const target of targets) {
            const config = target.config(s.user)
            const local = target.local
            if (config) {
              const list: Runner[] = []
              for (let i = 0; i < n; i++) list.push(runnerOf(await open(config)))
              runners.set(target, list)
            } else if (local) {
              runners.set(
                target,
                Array.from({ length: n }, () => (sql, params) => local.query(sql, params ?? [])),
              )
            }
          }
          const sql = protocol === 'simple' ? inline(s.sql, s.params) : s.sql
          const params = protocol === 'simple' ? undefined : s.params
          const rounds = new Map<Target, RoundResult[]>()
          const cpu = new Map<Target, number>()
          for (let r = 0; r < ROUNDS; r++) {
            for (const [target, list] of runners) {
              const before = await target.cpuMicros?.()
              const result = await measure(list, sql, params)
              if (before !== undefined && target.cpuMicros) {
                cpu.set(target, (cpu.get(target) ?? 0) + (await target.cpuMicros()) - before)
              }
              rounds.set(target, [...(rounds.get(target) ?? []), result])
            }
          }
          const measured = targets.map((t) => {
            const r = rounds.get(t)
            return r ? combine(r) : undefined
          })
          const direct = measured[0]
          const label = [s.name, protocol, String(n)]
          latencyRows.push([
            ...label,
            ...measured.map((m, i) =>
              !m
                ? '-'
                : i === 0 || !direct
                  ? `${fmt(m.median, 2)} / ${fmt(m.p95, 2)}`
                  : `${fmt(m.median, 2)} / ${fmt(m.p95, 2)} (+${fmt((m.median - direct.median) * 1000, 0)})`,
            ),
          ])
          const perQuery = ROUNDS * n * (ITERATIONS + 20)
          throughputRows.push([
            ...label,
            ...measured.map((m, i) =>
              !m
                ? '-'
                : i === 0 || !direct
                  ? fmt(m.qps, 0)
                  : `${fmt(m.qps, 0)} (${fmt(m.qps / direct.qps, 2)}×)`,
            ),
            ...targets
              .filter((t) => t.cpuMicros)
              .map((t) => {
                const used = cpu.get(t)
                return used === undefined ? '-' : fmt(used / perQuery, 0)
              }),
          ])
          await Promise.all(clients.splice(0).map((c) => c.end()))
        }
      }
    }
    const names = targets.map((t) => t.name)
    printTable(
      'latency, ms median / p95 (added µs vs direct)',
      ['scenario', 'protocol', 'clients', ...names],
      latencyRows,
    )
    printTable(
      'throughput, q/s (ratio to direct); CPU of the relaying process per query',
      [
        'scenario',
        'protocol',
        'clients',
        ...names,
        ...targets.filter((t) => t.cpuMicros).map((t) => `${t.name} CPU µs/q`),
      ],
      throughputRows,
    )
    if (FILTER.test('connect')) {
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
      const directConnect = postgres ? await connect(postgres) : undefined
      const bouncerConnect = bouncer ? await connect(referenceConfig(bouncer.port)) : undefined
      const ratio = (ms: number) =>
        directConnect ? ` (${fmt(ms / directConnect.median, 2)}× direct)` : ''
      console.log(
        `\nconnect, ms median / p95: Palisade ${fmt(proxyConnect.median, 2)} / ` +
          `${fmt(proxyConnect.p95, 2)} (SCRAM, session compile, upstream bind)` +
          (directConnect
            ? `; direct ${fmt(directConnect.median, 2)} / ${fmt(directConnect.p95, 2)} (trust auth)`
            : '') +
          (bouncerConnect
            ? `; pgbouncer ${fmt(bouncerConnect.median, 2)} / ${fmt(bouncerConnect.p95, 2)} ` +
              `(trust auth, a pooled server connection)${ratio(bouncerConnect.median)}`
            : ''),
      )
      // The client derives its SCRAM key (PBKDF2, 4096 rounds) for the proxy; trust auth skips it.
      const kdf = scramKeyDerivationMs()
      const proxyOwn = proxyConnect.median - kdf
      console.log(
        `client-side SCRAM key derivation: ${fmt(kdf, 2)} ms; Palisade connect without it ` +
          `${fmt(proxyOwn, 2)} ms${ratio(proxyOwn)}`,
      )
    }
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    await bouncer?.stop()
    await relay?.stop()
    await plane.stop()
    await db?.close()
    await scratch?.drop()
  }
}
