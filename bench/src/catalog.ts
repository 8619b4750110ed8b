/**
 * bench/catalog: discovery of a wide upstream through `palisade serve` (its own process, embedded
 * store). For each size, a scratch PostgreSQL database (PALISADE_TEST_PG_URL) gets one schema
 * `wide` of N tables with 10 columns each; `save_catalog` exposes them all, then `sync_catalog`
 * runs with nothing changed. While each job runs, `/health` and `GET /users` are sent every
 * 100 ms, and a `SELECT 1` on an open session of the datasource (the data plane); the table
 * gives each job's time, the slowest of those requests and the failures, and the process's
 * resident memory. `BENCH_CATALOG_TABLES` overrides the sizes (100,1000,10000). `pnpm bench
 * catalog` runs it with bench/wide-login and bench/catalog-browsing (run.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { rssBytesOf } from './process-cpu.js'
import { PASSWORD } from './proxy-fixture.js'
import { type Serve, serve, sleep } from './serve-process.js'
import { fmt, printTable } from './stats.js'
import { catalogSizes } from './wide-fixture.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const SIZES = catalogSizes()
/** Requests slower than this count as failures too (the goal: none over 500 ms). */
const SLOW_MS = 500

/** One DO statement: N tables of 10 columns in schema `wide`, committed every 500 tables. */
function wideDdl(tables: number): string {
  return `DO $$ DECLARE i integer; BEGIN
    CREATE SCHEMA wide;
    FOR i IN SELECT generate_series(1, ${tables}) LOOP
      EXECUTE format('CREATE TABLE wide.%I (id integer PRIMARY KEY, tenant_id integer NOT NULL,
        name text, email text, amount numeric(10,2), qty integer, created_at timestamptz,
        active boolean, note text DEFAULT ''n/a'', extra jsonb)', 't' || lpad(i::text, 5, '0'));
      IF i % 500 = 0 THEN COMMIT; END IF;
    END LOOP;
  END $$`
}

interface JobRun {
  seconds: number
  worstMs: number
  /** The slowest `SELECT 1` of the open session. */
  worstQueryMs: number
  failures: number
  peakRss: number
  result: any
}

/** One admin request, timed (given up after 10 s); `ok` is false for an error status too. */
async function timed(url: string, token?: string): Promise<{ ms: number; ok: boolean }> {
  const started = performance.now()
  try {
    const res = await fetch(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(10_000),
    })
    await res.arrayBuffer()
    return { ms: performance.now() - started, ok: res.ok }
  } catch {
    return { ms: performance.now() - started, ok: false }
  }
}

/**
 * Submits a discovery job and polls it; meanwhile probes the admin API every 100 ms and sends
 * `SELECT 1` on `session` (one at a time, every 100 ms or when the last answers).
 */
async function runJob(
  s: Serve,
  datasourceId: string,
  body: unknown,
  session: pg.Client,
): Promise<JobRun> {
  let running = true
  let worstMs = 0
  let worstQueryMs = 0
  let failures = 0
  let peakRss = 0
  const querying = (async () => {
    while (running) {
      const started = performance.now()
      try {
        await session.query('SELECT 1')
      } catch {
        failures++
      }
      const ms = performance.now() - started
      worstQueryMs = Math.max(worstQueryMs, ms)
      if (ms > SLOW_MS) failures++
      await sleep(Math.max(0, 100 - ms))
    }
  })()
  const probing = (async () => {
    const pending: Promise<void>[] = []
    while (running) {
      pending.push(
        Promise.all([
          timed(`${s.adminUrl}/health`),
          timed(`${s.adminUrl}/api/v1/users`, s.token),
        ]).then((answers) => {
          for (const a of answers) {
            worstMs = Math.max(worstMs, a.ms)
            if (!a.ok || a.ms > SLOW_MS) failures++
          }
        }),
      )
      peakRss = Math.max(peakRss, rssBytesOf(s.child.pid as number, 0))
      await sleep(100)
    }
    await Promise.all(pending)
  })()
  let job: any
  try {
    const { job_id } = await s.api('POST', `/datasources/${datasourceId}/discover`, body)
    for (;;) {
      job = await s.api('GET', `/datasources/${datasourceId}/discover/${job_id}`)
      if (job.status !== 'running') break
      await sleep(100)
    }
  } finally {
    running = false
    await Promise.all([probing, querying])
  }
  if (job.status !== 'completed') throw new Error(`${job.action} ${job.status}: ${job.error}`)
  if (job.tables_done !== job.tables_total) throw new Error(`${job.action}: progress stopped short`)
  const seconds = (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000
  return { seconds, worstMs, worstQueryMs, failures, peakRss, result: job.result }
}

/** Creates the scratch database of `tables` tables; returns its datasource config and drop. */
async function wideDatabase(tables: number) {
  const url = new URL(pgUrl as string)
  const name = `palisade_bench_catalog_${process.pid}_${tables}`
  // One short connection per statement: a connection left idle through a long run may be gone.
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: pgUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`CREATE DATABASE ${name}`)
  const seed = new pg.Client({ connectionString: pgUrl?.replace(/\/[^/]*$/, `/${name}`) })
  await seed.connect()
  await seed.query(wideDdl(tables))
  await seed.end()
  return {
    config: {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: name,
      username: decodeURIComponent(url.username || 'postgres'),
      password: url.password ? decodeURIComponent(url.password) : null,
      sslmode: 'disable',
    },
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  }
}

const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 0)

export async function run(): Promise<void> {
  if (!pgUrl) {
    console.log('bench/catalog needs PALISADE_TEST_PG_URL (a PostgreSQL server for the upstream)')
    return
  }
  console.log(
    'palisade serve (embedded store) exposing schema `wide` of N tables x 10 columns; ' +
      `/health and GET /users every 100 ms during each job (failures: errors or over ${SLOW_MS} ms)\n`,
  )
  const rows: string[][] = []
  for (const tables of SIZES) {
    console.error(`bench/catalog: ${tables} tables`)
    const upstream = await wideDatabase(tables)
    const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-catalog-'))
    let s: Serve | undefined
    let session: pg.Client | undefined
    try {
      s = await serve(dir)
      const ds = await s.api('POST', '/datasources', {
        name: 'wide',
        ds_type: 'postgres',
        access_mode: 'open',
        config: upstream.config,
      })
      const names = Array.from({ length: tables }, (_, i) => `t${String(i + 1).padStart(5, '0')}`)
      // A user with an open session on the datasource, for the data plane's probe.
      const user = await s.api('POST', '/users', { username: 'probe', password: PASSWORD })
      await s.api('PUT', `/datasources/${ds.id}/users`, { user_ids: [user.id] })
      session = new pg.Client({
        host: '127.0.0.1',
        port: s.dataPort,
        database: 'wide',
        user: 'probe',
        password: PASSWORD,
      })
      await session.connect()
      const selection = {
        action: 'save_catalog',
        schemas: [
          {
            schema_name: 'wide',
            is_selected: true,
            tables: names.map((table_name) => ({ table_name, is_selected: true })),
          },
        ],
      }
      const save = await runJob(s, ds.id, selection, session)
      if (save.result.exposed_tables !== tables) throw new Error('save exposed too few tables')
      const sync = await runJob(s, ds.id, { action: 'sync_catalog' }, session)
      if (sync.result.has_breaking_changes) throw new Error('sync found breaking changes')
      await sleep(1000)
      console.error(
        `bench/catalog: ${tables} tables: save ${save.seconds} s, sync ${sync.seconds} s`,
      )
      rows.push([
        String(tables),
        fmt(save.seconds, 2),
        fmt(save.worstMs, 0),
        fmt(save.worstQueryMs, 0),
        String(save.failures),
        fmt(sync.seconds, 2),
        fmt(sync.worstMs, 0),
        fmt(sync.worstQueryMs, 0),
        String(sync.failures),
        mb(Math.max(save.peakRss, sync.peakRss)),
        mb(rssBytesOf(s.child.pid as number, 0)),
      ])
    } catch (error) {
      console.error(`bench/catalog: ${tables} tables: ${(error as Error).message}`)
    } finally {
      await session?.end().catch(() => undefined)
      if (s && s.child.exitCode === null) await s.stop()
      rmSync(dir, { recursive: true, force: true })
      await upstream.drop()
    }
  }
  printTable(
    'save_catalog and sync_catalog through palisade serve',
    [
      'tables',
      'save s',
      'worst admin ms (save)',
      'worst SELECT 1 ms (save)',
      'failures (save)',
      'sync s',
      'worst admin ms (sync)',
      'worst SELECT 1 ms (sync)',
      'failures (sync)',
      'peak RSS MB',
      'RSS after MB',
    ],
    rows,
  )
}
