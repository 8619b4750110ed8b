/**
 * Store benchmarks: session-context build time, query-audit ingest onto a large log, bytes per
 * row, verify and list latency at that size. PostgreSQL parts run when PALISADE_TEST_PG_URL is
 * set (a scratch database is created and dropped). BENCH_AUDIT_PREFILL and BENCH_AUDIT_ROWS size
 * the audit parts.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
// The bench package does not list @palisade/store; import its build output directly.
import { createStore, type Store } from '../../packages/store/dist/index.js'
import { fmt, summarize } from './stats.js'

const SYSTEM = '00000000-0000-0000-0000-000000000000'
const KEY = 'bench-only-secret-key'
const pgUrl = process.env['PALISADE_TEST_PG_URL']

async function time(fn: () => Promise<unknown>, iterations: number, warmup = 20) {
  for (let i = 0; i < warmup; i++) await fn()
  const samples: number[] = []
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint()
    await fn()
    samples.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return summarize(samples)
}

/** A user in 5 roles over 3 levels, 50 policies, a 20-table catalog. */
async function seedSession(store: Store): Promise<{ username: string; dsName: string }> {
  const admin = await store.users.create(
    { username: 'admin', password: 'Bench-Pass-1', is_admin: true },
    SYSTEM,
  )
  const a = admin.id
  await store.attributes.create({ key: 'tenant', entity_type: 'user', value_type: 'integer' }, a)
  const user = await store.users.create(
    { username: 'alice', password: 'Bench-Pass-1', attributes: { tenant: 1 } },
    a,
  )
  const role = (name: string) => store.roles.create({ name }, a)
  const [d1, d2, m1, m2, top] = [
    await role('direct1'),
    await role('direct2'),
    await role('mid1'),
    await role('mid2'),
    await role('top'),
  ]
  for (const [child, parent] of [
    [d1, m1],
    [d2, m2],
    [m1, top],
    [m2, top],
  ] as const) {
    await store.roles.addParent(child.id, { parent_role_id: parent.id }, a)
  }
  await store.roles.addMembers(d1.id, { user_ids: [user.id] }, a)
  await store.roles.addMembers(d2.id, { user_ids: [user.id] }, a)
  const ds = await store.datasources.create({ name: 'shop', ds_type: 'pglite', config: {} }, a)
  await store.access.setRoles(ds.id, { role_ids: [top.id] }, a)
  const columns = Array.from({ length: 8 }, (_, i) => ({
    column_name: i === 0 ? 'id' : `c${i}`,
    ordinal_position: i + 1,
    data_type: 'text',
    is_nullable: true,
  }))
  await store.catalog.saveCatalog(
    ds.id,
    [
      {
        schema_name: 'public',
        is_selected: true,
        tables: Array.from({ length: 20 }, (_, i) => ({
          table_name: `t${i}`,
          is_selected: true,
          columns,
        })),
      },
    ],
    a,
  )
  const scopes = [
    {},
    { role_id: d1.id },
    { role_id: m2.id },
    { role_id: top.id },
    { user_id: user.id },
  ]
  for (let i = 0; i < 50; i++) {
    const p = await store.policies.create(
      {
        name: `p${i}`,
        policy_type: 'row_filter',
        targets: [{ schemas: ['public'], tables: [`t${i % 20}`] }],
        filter_expression: 'c1 = {user.tenant}',
      },
      a,
    )
    await store.assignments.assign(
      ds.id,
      { policy_id: p.id, priority: i, ...scopes[i % scopes.length] },
      a,
    )
  }
  return { username: user.username, dsName: ds.name }
}

async function benchSessions(label: string, store: Store) {
  const { username, dsName } = await seedSession(store)
  const input = await store.buildSessionInput(username, dsName)
  const s = await time(() => store.buildSessionInput(username, dsName), 300)
  console.log(
    `| session build (${label}) | ${input.user.roles.length} roles, ${input.policies.length} policies | ${fmt(s.median, 2)} ms | ${fmt(s.p95, 2)} ms | ≤ 5 ms |`,
  )
}

const USERS = Array.from(
  { length: 50 },
  (_, i) => `0190f000-0000-7000-8000-${String(i).padStart(12, '0')}`,
)
const DATASOURCES = USERS.slice(0, 2)
const POLICIES = [
  { policy_id: USERS[40], version: 3, name: 'tenant-isolation', decision: null },
  { policy_id: USERS[41], version: 1, name: 'email-mask', decision: null },
]
const ORIGINAL = 'SELECT abalance FROM pgbench_accounts WHERE aid = $1'
const REWRITTEN =
  "SELECT abalance FROM ( SELECT pgbench_accounts.aid, pgbench_accounts.bid, pgbench_accounts.abalance FROM public.pgbench_accounts WHERE pgbench_accounts.tenant = 'acme' OFFSET 0 ) AS pgbench_accounts WHERE aid = $1"

/**
 * The shape of a row `palisade serve` writes for pgbench's point query in simple protocol: a
 * statement filled from a rewrite template with its literal, 50 users on 2 datasources, two
 * policies, and one statement in 50 refused.
 */
function auditRecord(i: number) {
  const aid = String((i * 7919) % 1_000_000)
  const denied = i % 50 === 0
  return {
    user_id: USERS[i % 50] as string,
    username: `user${i % 50}`,
    data_source_id: DATASOURCES[i % 2] as string,
    datasource_name: `shop${i % 2}`,
    original_query: ORIGINAL.replace('$1', aid),
    rewritten_query: denied ? null : REWRITTEN.replace('$1', aid),
    policies_applied: POLICIES,
    execution_time_ms: i % 4,
    client_info: 'pgbench',
    status: denied ? ('denied' as const) : ('success' as const),
    error_message: denied ? 'Only read-only queries are allowed' : null,
    ...(denied ? {} : { template: { originalSql: ORIGINAL, sql: REWRITTEN, literals: [aid] } }),
  }
}

/** CPU time of the calling thread so far, in µs (Linux: /proc/thread-self/stat, 10 ms ticks). */
function threadCpuMicros(): number {
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/**
 * Writes `rows` entries through the store's writer as fast as it takes them: rows per second,
 * and this thread's CPU per row beyond making the records (what the serving thread pays).
 */
async function writeRows(store: Store, first: number, rows: number) {
  const madeFrom = threadCpuMicros()
  let keep = 0
  for (let i = first; i < first + rows; i++) keep += auditRecord(i).username.length
  const making = threadCpuMicros() - madeFrom
  const cpuFrom = threadCpuMicros()
  const start = performance.now()
  for (let i = first; i < first + rows; i++) {
    store.audit.queries.write(auditRecord(i))
    // The writer's pacing (docs/audit.md, "When rows are written"), as the data plane obeys it.
    const behind = store.audit.queries.writer.backlog()
    if (behind) await behind
  }
  await store.audit.queries.flush()
  const seconds = (performance.now() - start) / 1000
  const servingMicros = (threadCpuMicros() - cpuFrom - making) / rows
  return { rate: rows / seconds, servingMicros: keep >= 0 ? servingMicros : 0 }
}

/**
 * Query-audit ingest on one store, as issue 40 measures it: the log first filled with
 * BENCH_AUDIT_PREFILL rows (default 10,000,000), then BENCH_AUDIT_ROWS more timed (default
 * 1,000,000); bytes per stored row; `verify` over the whole log; list latency at that size.
 */
async function benchAudit(label: string, store: Store) {
  const prefill = Number(process.env['BENCH_AUDIT_PREFILL'] ?? 10_000_000)
  const rows = Number(process.env['BENCH_AUDIT_ROWS'] ?? 1_000_000)
  const { rate: fillRate } = await writeRows(store, 0, prefill)
  const { rate, servingMicros } = await writeRows(store, prefill, rows)
  const stats = store.audit.queries.writer.stats
  console.log(
    `| audit cost on the writing thread (${label}) | CPU per row beyond making it | ${fmt(servingMicros, 2)} µs | | ≤ 3 µs |`,
  )
  console.log(
    `| audit ingest (${label}) | ${fmt(rows, 0)} rows onto ${fmt(prefill, 0)} (filled at ${fmt(fillRate, 0)} rows/s) | | ${fmt(rate, 0)} rows/s | ≥ 60,000 rows/s |`,
  )
  const result = (await store.db.execute(
    `SELECT (pg_total_relation_size('query_audit_chunks') + pg_total_relation_size('query_audit_texts')
      + pg_total_relation_size('query_audit_counts'))::float8 AS bytes,
      (SELECT sum(entries) FROM query_audit_chunks)::float8 AS entries`,
  )) as unknown as { rows: { bytes: number; entries: number }[] }
  const [size] = result.rows
  console.log(
    `| audit bytes per row (${label}) | ${fmt(size?.entries ?? 0, 0)} rows, tables and indexes | ${fmt((size?.bytes ?? 0) / (size?.entries || 1), 0)} B | | ≤ 250 B |`,
  )
  console.log(
    `| audit rows lost (${label}) | written ${stats.written} | dropped ${stats.dropped} | failed ${stats.failed} | 0 |`,
  )
  const verifyStart = performance.now()
  const verified = await store.audit.verify()
  console.log(
    `| audit verify (${label}) | ${fmt(verified.logs.find((l) => l.log === 'queries')?.entries ?? 0, 0)} entries | ${fmt((performance.now() - verifyStart) / 1000, 1)} s | ${verified.ok ? 'OK' : `BROKEN: ${verified.first_broken?.reason}`} | OK |`,
  )
  const from = new Date(Date.now() - 60_000)
  const filters: [string, object][] = [
    ['none', {}],
    ['user_id', { user_id: USERS[7] }],
    ['datasource_id', { datasource_id: DATASOURCES[1] }],
    ['status', { status: 'denied' }],
    ['from (last minute)', { from }],
    ['user_id + status + from', { user_id: USERS[7], status: 'denied', from }],
    ['page 50', { page: 50 }],
  ]
  for (const [name, filter] of filters) {
    const s = await time(() => store.audit.queries.list(filter), 20, 3)
    console.log(
      `| audit list ${name} (${label}) | | ${fmt(s.median, 1)} ms | ${fmt(s.p95, 1)} ms | ≤ 50 ms |`,
    )
  }
}

async function scratchDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `palisade_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: pgUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(pgUrl as string)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: pgUrl })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

/** Runs every store benchmark and prints one table. */
export async function run(): Promise<void> {
  console.log('| measure | setup | median | p95 / rate | target |')
  console.log('| --- | --- | --- | --- | --- |')
  // The embedded store as `palisade serve` runs it: a data directory on disk.
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-bench-store-'))
  const lite = await createStore({ secretKey: KEY, dataDir })
  try {
    await benchSessions('PGlite', lite)
    await benchAudit('PGlite', lite)
  } finally {
    await lite.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
  if (!pgUrl) {
    console.log('\nPostgreSQL parts skipped: set PALISADE_TEST_PG_URL to run them.')
    return
  }
  const scratch = await scratchDatabase()
  const store = await createStore({ databaseUrl: scratch.url, secretKey: KEY })
  try {
    await benchSessions('PostgreSQL', store)
    await benchAudit('PostgreSQL', store)
  } finally {
    await store.close()
    await scratch.drop()
  }
}
