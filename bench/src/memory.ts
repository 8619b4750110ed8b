/**
 * bench/memory: `palisade serve` as deployed (the CLI in its own process), its resident memory
 * idle and under load, with the embedded PGlite store and with a PostgreSQL store
 * (PALISADE_TEST_PG_URL). Idle is read 3 s after the admin API answers; a PGlite store is read on
 * its very first start and again when reopened. The load is `BENCH_MEMORY_CLIENTS` sessions (16)
 * sending a filtered point query for `BENCH_MEMORY_MS` (8000), against the scratch PostgreSQL
 * database when there is a server, else an embedded `pglite` datasource.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './free-port.js'
import { PASSWORD, SETUP } from './proxy-fixture.js'
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.js'
import { fmt, printTable } from './stats.js'

const pgUrl = process.env['PALISADE_TEST_PG_URL']
const CLIENTS = Number(process.env['BENCH_MEMORY_CLIENTS'] ?? 16)
const LOAD_MS = Number(process.env['BENCH_MEMORY_MS'] ?? 8000)
const CLI = new URL('../../packages/server/dist/cli.js', import.meta.url).pathname
const ADMIN = { username: 'admin', password: 'Bench-admin-1' }

/** Resident memory of a process, from /proc (Linux). */
function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
  } catch {
    return 0 // the process is gone
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 0)} MB`

interface Serve {
  child: ChildProcess
  dataPort: number
  api(method: string, path: string, body?: unknown): Promise<any>
  stop(): Promise<void>
}

/** Starts `palisade serve`; resolves once the admin API answers, with an admin token. */
async function serve(dataDir: string, databaseUrl?: string): Promise<Serve> {
  const [dataPort, adminPort] = [await freePort(), await freePort()]
  const args = [CLI, 'serve', '--data-dir', dataDir, '--pg-port', String(dataPort)]
  args.push('--admin-port', String(adminPort), '--log-level', 'warn')
  if (databaseUrl) args.push('--database-url', databaseUrl)
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PALISADE_ADMIN_USERNAME: ADMIN.username,
      PALISADE_ADMIN_PASSWORD: ADMIN.password,
    },
  })
  const base = `http://127.0.0.1:${adminPort}`
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    )
    if (up) break
    if (i > 600 || child.exitCode !== null) throw new Error('palisade serve did not start')
    await sleep(100)
  }
  let token = ''
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  token = (await api('POST', '/auth/login', ADMIN)).token
  return {
    child,
    dataPort,
    api,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** A datasource over the bench tables, a user with access and a tenant row filter. */
async function seed(s: Serve, scratch: ScratchDatabase | undefined): Promise<void> {
  const upstream = scratch?.upstream
  const ds = await s.api(
    'POST',
    '/datasources',
    upstream
      ? {
          name: 'bench',
          ds_type: 'postgres',
          access_mode: 'open',
          config: {
            host: upstream['host'],
            port: upstream['port'],
            database: upstream['database'],
            username: upstream['user'],
            sslmode: 'disable',
          },
          // One upstream session per client, so none waits.
          pool_size: CLIENTS,
        }
      : { name: 'bench', ds_type: 'pglite', access_mode: 'open', config: { init_sql: SETUP } },
  )
  const { job_id } = await s.api('POST', `/datasources/${ds.id}/discover`, {
    action: 'save_catalog',
    schemas: [
      {
        schema_name: 'public',
        is_selected: true,
        tables: [{ table_name: 'orders', is_selected: true }],
      },
    ],
  })
  for (;;) {
    const job = await s.api('GET', `/datasources/${ds.id}/discover/${job_id}`)
    if (job.status !== 'running') break
    await sleep(100)
  }
  await s.api('POST', '/attribute-definitions', {
    key: 'tenant',
    entity_type: 'user',
    value_type: 'integer',
  })
  const user = await s.api('POST', '/users', {
    username: 'bench',
    password: PASSWORD,
    attributes: { tenant: 3 },
  })
  await s.api('PUT', `/datasources/${ds.id}/users`, { user_ids: [user.id] })
  const policy = await s.api('POST', '/policies', {
    name: 'tenant rows',
    policy_type: 'row_filter',
    targets: [{ schemas: ['public'], tables: ['orders'] }],
    filter_expression: 'tenant = {user.tenant}',
  })
  await s.api('POST', `/datasources/${ds.id}/policies`, { policy_id: policy.id })
}

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
      peak = Math.max(peak, rssOf(s.child.pid as number))
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
          const first = rssOf(s.child.pid as number)
          let reopened: number | undefined
          if (!databaseUrl) {
            await s.stop()
            s = await serve(dir)
            await sleep(3000)
            reopened = rssOf(s.child.pid as number)
          }
          await seed(s, scratch)
          const { peak, queries } = await load(s)
          await sleep(2000)
          const after = rssOf(s.child.pid as number)
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
