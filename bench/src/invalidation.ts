/**
 * bench/invalidation: two Palisade instances sharing one PostgreSQL store. A client on B holds a
 * connection; an admin toggles a row filter through A's admin API, 100 times. Reported: the time
 * from A's response to the first query on B that sees the change (target ≤ 100 ms), how many
 * queries that took, and what the change costs the admin request. Needs PostgreSQL:
 * PALISADE_BENCH_PG_URL, else PALISADE_TEST_PG_URL (scratch databases are created and dropped).
 */
import pg from 'pg'
// The bench package does not list @palisade/server; import its build output directly.
import {
  createLogger,
  createServer,
  type PalisadeServer,
} from '../../packages/server/dist/index.js'
import { fmt, summarize } from './stats.js'

const pgUrl = process.env['PALISADE_BENCH_PG_URL'] ?? process.env['PALISADE_TEST_PG_URL']
const CHANGES = Number(process.env['BENCH_INVALIDATION_CHANGES'] ?? 100)
const TARGET_MS = 100
const PASSWORD = 'Bench-Passw0rd!'
const QUERY = 'SELECT count(*)::int AS n FROM orders'

const SHOP = `
CREATE TABLE orders (id int PRIMARY KEY, tenant text NOT NULL, amount numeric);
INSERT INTO orders SELECT g, 't' || (g % 10), g * 1.5 FROM generate_series(1, 1000) g;
`

function databaseUrl(base: string, name: string): string {
  const u = new URL(base)
  u.pathname = `/${name}`
  return u.toString()
}

function start(storeUrl: string): Promise<PalisadeServer> {
  return createServer({
    databaseUrl: storeUrl,
    secretKey: 'bench-only-secret-key',
    jwtSecret: 'bench-only-jwt-secret-0123456789abcdef',
    initialAdmin: { username: 'admin', password: PASSWORD },
    dataPlane: { port: 0 },
    admin: { port: 0 },
    logger: createLogger({ level: 'warn' }),
  })
}

/** alice on datasource `shop`, with a row filter `tenant = 't3'` that the bench toggles. */
async function seed(server: PalisadeServer, upstream: URL, shopDb: string) {
  const { store } = server
  const admin = (await store.users.list({ page_size: 10 })).data.find((u) => u.is_admin)
  if (!admin) throw new Error('no admin')
  const a = admin.id
  const alice = await store.users.create({ username: 'alice', password: PASSWORD }, a)
  const ds = await store.datasources.create(
    {
      name: 'shop',
      access_mode: 'open',
      ds_type: 'postgres',
      pool_size: 4,
      config: {
        host: upstream.hostname,
        port: Number(upstream.port || 5432),
        database: shopDb,
        username: decodeURIComponent(upstream.username || 'postgres'),
        password: upstream.password ? decodeURIComponent(upstream.password) : null,
        sslmode: 'disable',
      },
    },
    a,
  )
  const column = (column_name: string, ordinal_position: number, data_type: string) => ({
    column_name,
    ordinal_position,
    data_type,
    is_nullable: true,
    is_selected: true,
  })
  await store.catalog.saveCatalog(
    ds.id,
    [
      {
        schema_name: 'public',
        is_selected: true,
        tables: [
          {
            table_name: 'orders',
            is_selected: true,
            columns: [
              column('id', 1, 'integer'),
              column('tenant', 2, 'text'),
              column('amount', 3, 'numeric'),
            ],
          },
        ],
      },
    ],
    a,
  )
  await store.access.setUsers(ds.id, { user_ids: [alice.id] }, a)
  const policy = await store.policies.create(
    {
      name: 'one-tenant',
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filter_expression: "tenant = 't3'",
    },
    a,
  )
  await store.assignments.assign(ds.id, { policy_id: policy.id, user_id: alice.id }, a)
  return { policyId: policy.id, version: policy.version }
}

export async function run(): Promise<void> {
  if (!pgUrl) {
    console.log(
      'skipped: needs PostgreSQL for the shared store; set PALISADE_BENCH_PG_URL or ' +
        'PALISADE_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)',
    )
    return
  }
  const suffix = `${process.pid}_${Date.now()}`
  const storeDb = `palisade_bench_store_${suffix}`
  const shopDb = `palisade_bench_shop_${suffix}`
  const root = new pg.Client({ connectionString: pgUrl })
  await root.connect()
  await root.query(`CREATE DATABASE ${storeDb}`)
  await root.query(`CREATE DATABASE ${shopDb}`)
  const servers: PalisadeServer[] = []
  let onB: pg.Client | undefined
  try {
    const shop = new pg.Client({ connectionString: databaseUrl(pgUrl, shopDb) })
    await shop.connect()
    await shop.query(SHOP)
    await shop.end()
    const storeUrl = databaseUrl(pgUrl, storeDb)
    // Started together on an empty store, as a rollout would: one migrates, one admin is made.
    const [a, b] = await Promise.all([start(storeUrl), start(storeUrl)])
    servers.push(a, b)
    let { policyId, version } = await seed(a, new URL(pgUrl), shopDb)

    const login = await fetch(`${a.admin.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    })
    const { token } = (await login.json()) as { token: string }
    const client = new pg.Client({
      host: '127.0.0.1',
      port: b.dataPlane.port,
      user: 'alice',
      password: PASSWORD,
      database: 'shop',
    })
    onB = client
    await client.connect()
    const count = async () => (await client.query(QUERY)).rows[0].n as number
    const filtered = await count()

    // When B's sessions were marked, relative to A's answer (negative: before it).
    let heardAt = 0
    b.store.changes.subscribe((notice) => {
      if (notice.origin === 'remote') heardAt = performance.now()
    })

    const toggle = async (enabled: boolean) => {
      const res = await fetch(`${a.admin.url}/api/v1/policies/${policyId}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ version, is_enabled: enabled }),
      })
      if (res.status !== 200) throw new Error(`PATCH answered ${res.status}`)
      version = ((await res.json()) as { version: number }).version
    }
    // Warm-up (JIT, pools, caches), then the measured changes.
    for (let i = 0; i < 20; i++) {
      await toggle(i % 2 !== 0)
      await count()
    }

    const visible: number[] = []
    const queries: number[] = []
    const admin: number[] = []
    const lead: number[] = []
    let enabled = true
    for (let i = 0; i < CHANGES; i++) {
      enabled = !enabled
      const expected = enabled ? filtered : 1000
      const sent = performance.now()
      await toggle(enabled)
      const answered = performance.now()
      admin.push(answered - sent)
      lead.push(heardAt - answered)
      let n = 0
      for (;;) {
        n++
        if ((await count()) === expected) break
        if (performance.now() - answered > 5000) throw new Error('change never reached B')
      }
      visible.push(performance.now() - answered)
      queries.push(n)
    }

    // The same changes with B gone: what confirming with one other instance adds to a request.
    await client.end()
    onB = undefined
    await b.close()
    const alone: number[] = []
    for (let i = 0; i < CHANGES; i++) {
      enabled = !enabled
      const sent = performance.now()
      await toggle(enabled)
      alone.push(performance.now() - sent)
    }

    const v = summarize(visible)
    const q = summarize(queries)
    const adm = summarize(admin)
    const l = summarize(lead)
    const firstTry = queries.filter((n) => n === 1).length
    console.log(`${CHANGES} changes (a row filter toggled through A's admin API); client on B\n`)
    console.log('| measure | median | p95 | max |')
    console.log('|---|---|---|---|')
    const row = (name: string, s: { median: number; p95: number }, max: number, d = 2) =>
      console.log(`| ${name} | ${fmt(s.median, d)} | ${fmt(s.p95, d)} | ${fmt(max, d)} |`)
    row("A's response → first query on B that sees it, ms", v, Math.max(...visible))
    row('queries on B until it sees it', q, Math.max(...queries), 0)
    row('admin PATCH round trip on A (includes B confirming), ms', adm, Math.max(...admin))
    row(
      'admin PATCH round trip on A with no other instance, ms',
      summarize(alone),
      Math.max(...alone),
    )
    row("B's sessions marked, relative to A's response, ms", l, Math.max(...lead))
    console.log(
      `\nfirst query after the response saw the change: ${firstTry}/${CHANGES}; ` +
        `target ≤ ${TARGET_MS} ms: ${v.median <= TARGET_MS ? 'met' : 'MISSED'} ` +
        `(median ${fmt(v.median, 2)} ms)`,
    )
  } finally {
    await onB?.end().catch(() => {})
    await Promise.allSettled(servers.map((s) => s.close()))
    await root.query(`DROP DATABASE IF EXISTS ${storeDb} WITH (FORCE)`)
    await root.query(`DROP DATABASE IF EXISTS ${shopDb} WITH (FORCE)`)
    await root.end()
  }
}
