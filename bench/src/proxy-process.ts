/**
 * The proxy of bench/proxy, alone in its process as in a real deployment (the load generator's
 * clients then do not share its event loop). The upstream comes from `BENCH_PROXY_UPSTREAM`:
 * `{"kind":"pglite"}` (default, seeded with the bench schema) or a PostgreSQL pool config.
 * Prints `{port, rss, cpuMicros}` once listening and again for every line read on stdin
 * (`cpuMicros`: the process's user + system CPU time so far).
 *
 * `{"kind":"pglite-only"}` builds the same seeded PGlite without a proxy, prints
 * `{before, after}` (settled RSS around it) and exits: idle-connections.ts subtracts it.
 */
import { createInterface } from 'node:readline'
import { PGlite } from '@electric-sql/pglite'
import {
  createDataPlane,
  createPgliteUpstream,
  PostgresPool,
  type UpstreamProvider,
} from '../../packages/server/dist/index.js'
import { benchBackend, SETUP } from './proxy-fixture.js'

const upstream = JSON.parse(process.env['BENCH_PROXY_UPSTREAM'] ?? '{"kind":"pglite"}') as {
  kind: string
}

/**
 * RSS after 12 s idle with a full collection every half second: PGlite's discarded start-up
 * instance goes on a later collection than the first, and V8 gives memory back in steps up to
 * about 10 s after a burst of allocation (connections opening, PGlite starting).
 */
async function settledRss(): Promise<number> {
  for (let pass = 0; pass < 24; pass++) {
    globalThis.gc?.()
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return process.memoryUsage().rss
}

/** The in-process upstream, seeded with the bench schema. */
async function seededPglite(): Promise<PGlite> {
  // The bench's tables take about 2 MB; PGlite's default 128 MB of shared buffers, touched at
  // start-up, would add over 100 MB of upstream memory to the proxy's figure.
  const db = await PGlite.create({ postgresqlconf: ['shared_buffers=16MB'] })
  await db.exec(SETUP)
  // PGlite returns most of its start-up memory over the first seconds.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  return db
}

if (upstream.kind === 'pglite-only') {
  const before = await settledRss()
  const db = await seededPglite()
  console.log(JSON.stringify({ before, after: await settledRss() }))
  await db.close()
  process.exit(0)
}

let factory: () => Promise<UpstreamProvider>
let db: PGlite | undefined
if (upstream.kind === 'postgres') {
  factory = async () => {
    const pool = new PostgresPool(upstream as ConstructorParameters<typeof PostgresPool>[0])
    await pool.warm(9)
    return pool
  }
} else {
  const local = await seededPglite()
  db = local
  factory = () => createPgliteUpstream({ db: local })
}
const plane = await createDataPlane({
  backend: benchBackend(),
  upstreamFactory: factory,
  port: 0,
  log: () => {},
  maxConnections: 100_000,
  // The load generator opens every client from one address at once.
  maxPendingConnections: 100_000,
  maxPendingPerAddress: 100_000,
})
const report = async (settle: boolean) => {
  const { user, system } = process.cpuUsage()
  const rss = settle ? await settledRss() : process.memoryUsage().rss
  console.log(JSON.stringify({ port: plane.port, rss, cpuMicros: user + system }))
}
await report(false)
// `rss` settles memory first, so figures compare live memory, not garbage; `cpu` answers at once.
for await (const line of createInterface({ input: process.stdin })) await report(line === 'rss')
// stdin closed: stop, and exit normally (so --cpu-prof writes its profile).
await plane.close()
await db?.close()
process.exit(0)
