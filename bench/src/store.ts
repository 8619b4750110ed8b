/**
 * Store benchmarks: session-context build time, query-audit write throughput and audit list
 * latency. PostgreSQL parts run when PALISADE_TEST_PG_URL is set (a scratch database is created
 * and dropped); BENCH_AUDIT_ROWS sets the audit list table size (default 100,000).
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
// The bench package does not list @palisade/store; import its build output directly.
import { createStore, type Store } from '../../packages/store/dist/index.js'
import { fmt, summarize } from './stats.js'

const SYSTEM = '00000000-0000-0000-0000-000000000000'
const KEY = 'bench-only-secret-key'
const pgUrl = process.env['PALISADE_TEST_PG_URL']
const auditRows = Number(process.env['BENCH_AUDIT_ROWS'] ?? 100_000)

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

async function benchWriter(label: string, store: Store, rows: number) {
  const row = {
    user_id: SYSTEM,
    username: 'bench',
    data_source_id: SYSTEM,
    datasource_name: 'shop',
    original_query: 'SELECT * FROM orders WHERE id = 1',
    rewritten_query:
      'SELECT * FROM (SELECT id FROM public.orders WHERE tenant = 1 OFFSET 0) orders WHERE id = 1',
    policies_applied: '[{"policy_id":"x","version":1,"name":"p","decision":null}]',
    execution_time_ms: 1,
    status: 'success' as const,
  }
  const start = performance.now()
  for (let i = 0; i < rows; i++) store.audit.queries.write(row)
  await store.audit.queries.flush()
  const seconds = (performance.now() - start) / 1000
  console.log(
    `| audit writer (${label}) | ${rows} rows | ${fmt(rows / seconds, 0)} rows/s | | ≥ 10k rows/s on PostgreSQL |`,
  )
}

async function benchAuditList(store: Store, databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const users = Array.from(
    { length: 50 },
    (_, i) => `0190f000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  )
  const dss = users.slice(0, 5)
  await client.query(
    `INSERT INTO query_audit_log (id, user_id, username, data_source_id, datasource_name, original_query,
       policies_applied, status, created_at)
     SELECT gen_random_uuid(), ($1::uuid[])[1 + g % 50], 'u', ($2::uuid[])[1 + g % 5], 'd', 'SELECT 1', '[]',
       (ARRAY['success','success','success','error','denied'])[1 + g % 5],
       now() - (g || ' seconds')::interval
     FROM generate_series(1, $3) g`,
    [users, dss, auditRows],
  )
  await client.query('VACUUM ANALYZE query_audit_log')
  await client.end()
  const from = new Date(Date.now() - 3600_000)
  const filters: [string, object][] = [
    ['none', {}],
    ['user_id', { user_id: users[7] }],
    ['datasource_id', { datasource_id: dss[2] }],
    ['status', { status: 'denied' }],
    ['from/to (last hour)', { from, to: new Date() }],
    ['user_id + status + from', { user_id: users[7], status: 'error', from }],
    ['page 50', { page: 50 }],
  ]
  for (const [name, filter] of filters) {
    const s = await time(() => store.audit.queries.list(filter), 50, 5)
    console.log(
      `| audit list ${name} (${auditRows} rows) | | ${fmt(s.median, 1)} ms | ${fmt(s.p95, 1)} ms | ≤ 50 ms |`,
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
  const lite = await createStore({ secretKey: KEY })
  try {
    await benchSessions('PGlite', lite)
    await benchWriter('PGlite', lite, 20_000)
  } finally {
    await lite.close()
  }
  if (!pgUrl) {
    console.log('\nPostgreSQL parts skipped: set PALISADE_TEST_PG_URL to run them.')
    return
  }
  const scratch = await scratchDatabase()
  const store = await createStore({ databaseUrl: scratch.url, secretKey: KEY })
  try {
    await benchSessions('PostgreSQL', store)
    await benchWriter('PostgreSQL', store, 50_000)
    await benchAuditList(store, scratch.url)
  } finally {
    await store.close()
    await scratch.drop()
  }
}
