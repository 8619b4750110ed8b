/**
 * A proxy for bench/proxy's idle-connection measurement, alone in its process: prints
 * `{port, rss}` once listening, and `{port, rss}` again for every line read on stdin.
 */
import { createInterface } from 'node:readline'
import { PGlite } from '@electric-sql/pglite'
import { createDataPlane, createPgliteUpstream } from '../../packages/server/dist/index.js'
import { benchBackend, SETUP } from './proxy-fixture.js'

const db = await PGlite.create()
await db.exec(SETUP)
const plane = await createDataPlane({
  backend: benchBackend(),
  upstreamFactory: () => createPgliteUpstream({ db }),
  port: 0,
  log: () => {},
  maxConnections: 100_000,
})
const report = async () => {
  // Collected and settled first, so the figures compare live memory, not garbage.
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 500))
  console.log(JSON.stringify({ port: plane.port, rss: process.memoryUsage().rss }))
}
// PGlite returns most of its start-up memory over the first seconds.
await new Promise((resolve) => setTimeout(resolve, 3000))
await report()
for await (const _ of createInterface({ input: process.stdin })) await report()
await plane.close()
