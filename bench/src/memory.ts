/**
 * bench/memory: `palisade serve` as deployed (the CLI in its own process), its resident memory
 * idle and under load, with the embedded PGlite store and with a PostgreSQL store
 * (PALISADE_TEST_PG_URL). Idle is read 3 s after the admin API answers; a PGlite store is read on
 * its very first start and again when reopened. The load is `BENCH_MEMORY_CLIENTS` sessions (16)
 * sending a filtered point query for `BENCH_MEMORY_MS` (8000), against the scratch PostgreSQL
 * database when there is a server, else an embedded `pglite` datasource.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { rssBytesOf } from './process-cpu.js'
import { PASSWORD } from './proxy-fixture.js'
import { createScratchDatabase } from './scratch-database.js'
import { type Serve, seed, serve, sleep } from './serve-process.js'
import { fmt, printTable } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const CLIENTS = Number(process.env['BENCH_MEMORY_CLIENTS'] ?? 16)
const LOAD_MS = Number(process.env['BENCH_MEMORY_MS'] ?? 8000)

const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 0)} MB`

/** CLIENTS sessions querying for LOAD_MS; returns the peak RSS seen and the queries run. */
async function load(s: Serve): Promise<{ peak: number; queries: number }> {
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const c = new pg.Client({
        host: '127.0.0.1',
        port: s.dataPort,
        user: 'bench',
        password: PASSWORD,
        database: 'bench',
      })
      c.on('error', (error) => console.error(`bench/memory: a client failed: ${error.message}`))
      await c.connect()
      return c
    }),
  )
  const until = performance.now() + LOAD_MS
  let peak = 0
  let queries = 0
  const sampling = (async () => {
    while (performance.now() < until) {
      peak = Math.max(peak, rssBytesOf(s.child.pid as number, 0))
      await sleep(200)
    }
  })()
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < until) {
        const id = 1 + Math.floor(Math.random() * 10_000)
        await c.query('SELECT id, amount FROM orders WHERE id = $1', [id])
        queries++
      }
      await c.end()
    }),
  )
  await sampling
  return { peak, queries }
}

export async function run(): Promise<void> {
  console.log(
    `palisade serve in its own process; load: ${CLIENTS} sessions, filtered point query, ` +
      `${LOAD_MS} ms (${pgUrl ? 'PostgreSQL' : 'embedded pglite'} upstream)\n`,
  )
  const scratch = pgUrl ? await createScratchDatabase(pgUrl) : undefined
  const rows: string[][] = []
  const stores: [string, string | undefined][] = [['PGlite (embedded default)', undefined]]
  let storeDb: string | undefined
  if (pgUrl) {
    storeDb = `palisade_bench_store_${process.pid}`
    const admin = new pg.Client({ connectionString: pgUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${storeDb}`)
    await admin.end()
    stores.push(['PostgreSQL', pgUrl.replace(/\/[^/]*$/, `/${storeDb}`)])
  }
  try {
    for (const [name, databaseUrl] of stores) {
      console.error(`bench/memory: ${name}`)
      const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-memory-'))
      try {
        let s = await serve(dir, databaseUrl)
        try {
          await sleep(3000)
          const first = rssBytesOf(s.child.pid as number, 0)
          let reopened: number | undefined
          if (!databaseUrl) {
            await s.stop()
            s = await serve(dir)
            await sleep(3000)
            reopened = rssBytesOf(s.child.pid as number, 0)
          }
          await seed(s, scratch, { tables: ['orders'], poolSize: CLIENTS })
          const { peak, queries } = await load(s)
          await sleep(2000)
          const after = rssBytesOf(s.child.pid as number, 0)
          rows.push([
            name,
            mb(first),
            reopened === undefined ? '–' : mb(reopened),
            mb(peak),
            mb(after),
            fmt(queries / (LOAD_MS / 1000), 0),
          ])
        } catch (error) {
          console.error(`bench/memory: ${name}: ${(error as Error).message}`)
        } finally {
          if (s.child.exitCode === null) await s.stop()
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  } finally {
    await scratch?.drop()
    if (storeDb && pgUrl) {
      const admin = new pg.Client({ connectionString: pgUrl })
      await admin.connect()
      await admin.query(`DROP DATABASE IF EXISTS ${storeDb} WITH (FORCE)`)
      await admin.end()
    }
  }
  printTable(
    'palisade serve resident memory',
    ['store', 'idle, first start', 'idle, reopened', 'peak under load', 'after load', 'queries/s'],
    rows,
  )
}
