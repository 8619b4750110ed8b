/**
 * `palisade serve` as deployed, for the benchmarks that measure it (bench/memory, bench/pgbench,
 * bench/pooling): the CLI in its own process with its store and query audit, started on free
 * ports, and seeded through the admin API.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { freePort } from './free-port.js'
import { cpuMicrosOf, mainThreadCpuMicrosOf } from './process-cpu.js'
import { PASSWORD, SETUP } from './proxy-fixture.js'
import type { ScratchDatabase } from './scratch-database.js'

const CLI = new URL('../../packages/server/dist/cli.js', import.meta.url).pathname
const ADMIN = { username: 'admin', password: 'Bench-admin-1' }
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface Serve {
  child: ChildProcess
  dataPort: number
  /** The admin API's origin (`http://127.0.0.1:<port>`), for requests timed by hand. */
  adminUrl: string
  /** The signed-in admin's bearer token. */
  token: string
  api(method: string, path: string, body?: unknown): Promise<any>
  /**
   * CPU time so far in µs (user + system, from /proc): the whole process, and its serving thread
   * (the event loop every connection runs on) alone.
   */
  cpuMicros(): { process: number; servingThread: number }
  stop(): Promise<void>
}

export interface ServeOptions {
  /**
   * The same build with every query-audit row built, then dropped instead of written
   * (`PALISADE_BENCH_DISCARD_QUERY_AUDIT=1`): beside the audited one, what the audit costs.
   */
  discardAudit?: boolean
  /** More environment for the process (e.g. `PALISADE_MAX_CONNECTIONS`). */
  env?: Record<string, string>
}

/** Starts `palisade serve`; resolves once the admin API answers, with an admin token. */
export async function serve(
  dataDir: string,
  databaseUrl?: string,
  options: ServeOptions = {},
): Promise<Serve> {
  const [dataPort, adminPort] = [await freePort(), await freePort()]
  // BENCH_SERVE_NODE_ARGS: Node options for the served process (e.g. `--cpu-prof`).
  const nodeArgs = process.env['BENCH_SERVE_NODE_ARGS']?.split(' ').filter(Boolean) ?? []
  const args = [...nodeArgs, CLI, 'serve', '--data-dir', dataDir, '--pg-port', String(dataPort)]
  args.push('--admin-port', String(adminPort), '--log-level', 'warn')
  if (databaseUrl) args.push('--database-url', databaseUrl)
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PALISADE_ADMIN_USERNAME: ADMIN.username,
      PALISADE_ADMIN_PASSWORD: ADMIN.password,
      // Set or cleared: the audited process must not inherit the bench's own setting.
      PALISADE_BENCH_DISCARD_QUERY_AUDIT: options.discardAudit ? '1' : '',
      ...options.env,
    },
  })
  const base = `http://127.0.0.1:${adminPort}`
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/ready`).then(
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
    adminUrl: base,
    token,
    api,
    cpuMicros: () => ({
      process: cpuMicrosOf(child.pid),
      servingThread: mainThreadCpuMicrosOf(child.pid),
    }),
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** What `seed` sets up: the tables to serve, their policies, the upstream pool size. */
export interface SeedOptions {
  /** Tables of `public` to select; the row filter applies to each. */
  tables: string[]
  /** Also mask `customers.email` as `'***'`. */
  maskEmail?: boolean
  /** Upstream sessions of the datasource (PostgreSQL upstream). */
  poolSize: number
  /** How clients share them (the datasource's `pool_mode`; default: the server's, session). */
  poolMode?: 'session' | 'transaction'
}

/** A datasource over the bench tables, a user `bench` (tenant 3) with access and the policies. */
export async function seed(
  s: Serve,
  scratch: ScratchDatabase | undefined,
  options: SeedOptions,
): Promise<void> {
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
          pool_size: options.poolSize,
          ...(options.poolMode ? { pool_mode: options.poolMode } : {}),
        }
      : { name: 'bench', ds_type: 'pglite', access_mode: 'open', config: { init_sql: SETUP } },
  )
  const { job_id } = await s.api('POST', `/datasources/${ds.id}/discover`, {
    action: 'save_catalog',
    schemas: [
      {
        schema_name: 'public',
        is_selected: true,
        tables: options.tables.map((table_name) => ({ table_name, is_selected: true })),
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
  const policies = [
    {
      name: 'tenant rows',
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: options.tables }],
      filter_expression: 'tenant = {user.tenant}',
    },
    ...(options.maskEmail
      ? [
          {
            name: 'email',
            policy_type: 'column_mask',
            targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
            mask_expression: "'***'",
          },
        ]
      : []),
  ]
  for (const body of policies) {
    const policy = await s.api('POST', '/policies', body)
    await s.api('POST', `/datasources/${ds.id}/policies`, { policy_id: policy.id })
  }
}
