/**
 * The proxy of bench/proxy, alone in its process as in a real deployment (the load generator's
 * clients then do not share its event loop). The upstream comes from `BENCH_PROXY_UPSTREAM`:
 * `{"kind":"pglite"}` (default, seeded with the bench schema) or a PostgreSQL pool config.
 * Prints `{port, rss, cpuMicros}` once listening and again for every line read on stdin
 * (`cpuMicros`: the process's user + system CPU time so far).
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
let factory: () => Promise<UpstreamProvider>
let db: PGlite | undefined
if (upstream.kind === 'postgres') {
  factory = async () => {
    const pool = new PostgresPool(upstream as ConstructorParameters<typeof PostgresPool>[0])
    await pool.warm(9)
    return pool
  }
} else {
  const local = await PGlite.create()
  await local.exec(SETUP)
  db = local
  factory = () => createPgliteUpstream({ db: local })
}
const plane = await createDataPlane({
  backend: benchBackend(),
  upstreamFactory: factory,
  port: 0,
  log: () => {},
  maxConnections: 100_000,
})
const report = async (settle: boolean) => {
  const { user, system } = process.cpuUsage()
  if (settle) {
    // Collected and settled first, so the figures compare live memory, not garbage.
    globalThis.gc?.()
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  const rss = process.memoryUsage().rss
  console.log(JSON.stringify({ port: plane.port, rss, cpuMicros: user + system }))
}
// PGlite returns most of its start-up memory over the first seconds.
if (db) await new Promise((resolve) => setTimeout(resolve, 3000))
await report(true)
// `rss` settles memory first; `cpu` answers at once.
for await (const line of createInterface({ input: process.stdin })) await report(line === 'rss')
// stdin closed: stop, and exit normally (so --cpu-prof writes its profile).
await plane.close()
await db?.close()
process.exit(0)
