/**
 * The wide upstream of bench/wide-login and bench/catalog-browsing: a scratch database with one
 * schema `wide` of N tables of 10 columns, and `palisade serve` seeded over it with datasources
 * `wide` (every table) and `one` (the first), users user0…user9 and `probe`, a tenant row filter
 * and a mask on `wide.*`.
 */
import pg from 'pg'
import { PASSWORD } from './proxy-fixture.js'
import { type Serve, sleep } from './serve-process.js'
import { fmt } from './stats.js'

/** Users user0…user(N-1), tenants 0…N-1. */
export const WIDE_USERS = 10

/**
 * The catalog sizes to measure: the first of `variables` that is set (a comma-separated list),
 * then `BENCH_CATALOG_TABLES` (which `pnpm bench catalog` sets for all three of its parts), else
 * 100, 1,000 and 10,000 tables.
 */
export function catalogSizes(...variables: string[]): number[] {
  const chosen = [...variables, 'BENCH_CATALOG_TABLES'].map((v) => process.env[v]).find(Boolean)
  return (chosen ?? '100,1000,10000').split(',').map(Number)
}

export interface WideDatabase {
  config: pg.ClientConfig & { host: string; port: number; database: string; user: string }
  /** Adds an integer column to `wide.<table>` upstream (for a sync to find). */
  addColumn(table: string, column: string): Promise<void>
  drop(): Promise<void>
}

/** `palisade_wide_<pid>` with schema `wide`: tables t00001… of 10 columns, made in one statement. */
export async function createWideDatabase(url: string, size: number): Promise<WideDatabase> {
  const name = `palisade_wide_${process.pid}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${name}`)
  const parsed = new URL(url)
  const config = {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    database: name,
    user: decodeURIComponent(parsed.username || 'postgres'),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
  }
  const c = new pg.Client(config)
  await c.connect()
  await c.query('CREATE SCHEMA wide')
  // One statement (alone, so it may commit): every 1,000 tables, so the lock table never fills.
  await c.query(`
    DO $$
    DECLARE i int;
    BEGIN
      FOR i IN SELECT generate_series(1, ${size}) LOOP
        EXECUTE format('CREATE TABLE wide.t%s (id int, tenant_id int, c2 text, c3 text, c4 int,
          c5 int, c6 date, c7 numeric, c8 boolean, c9 text)', lpad(i::text, 5, '0'));
        IF i % 1000 = 0 THEN COMMIT; END IF;
      END LOOP;
    END $$`)
  await c.end()
  return {
    config,
    async addColumn(table, column) {
      const client = new pg.Client(config)
      await client.connect()
      try {
        await client.query(`ALTER TABLE wide.${table} ADD COLUMN ${column} integer`)
      } finally {
        await client.end()
      }
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    },
  }
}

/**
 * Datasources `wide` (every table) and `one` (the first table) over the scratch database, users
 * u0…u9 (tenants 0…9) and `probe` with access to both, a row filter and a mask on `wide.*`.
 */
export async function seedWide(
  s: Serve,
  upstream: WideDatabase['config'],
  size: number,
): Promise<{
  changePolicy(n: number): Promise<void>
  /** Tags one table of `wide` (a catalog change sessions of the datasource must see). */
  tagTable(table: string, tag: string): Promise<void>
  /** Runs `sync_catalog` on `wide` (after the upstream changed) to its end. */
  syncWide(): Promise<void>
}> {
  const names = Array.from({ length: size }, (_, i) => `t${String(i + 1).padStart(5, '0')}`)
  const datasource = async (name: string, tables: string[]) => {
    const ds = await s.api('POST', '/datasources', {
      name,
      ds_type: 'postgres',
      access_mode: 'open',
      config: {
        host: upstream.host,
        port: upstream.port,
        database: upstream.database,
        username: upstream.user,
        sslmode: 'disable',
      },
      pool_size: 12,
    })
    const { job_id } = await s.api('POST', `/datasources/${ds.id}/discover`, {
      action: 'save_catalog',
      schemas: [
        {
          schema_name: 'wide',
          is_selected: true,
          tables: tables.map((table_name) => ({ table_name, is_selected: true })),
        },
      ],
    })
    for (;;) {
      const job = await s.api('GET', `/datasources/${ds.id}/discover/${job_id}`)
      if (job.status === 'failed') throw new Error(`save_catalog failed: ${JSON.stringify(job)}`)
      if (job.status !== 'running') break
      await sleep(200)
    }
    return ds.id as string
  }
  const saveStarted = performance.now()
  const wide = await datasource('wide', names)
  console.log(
    `  ${size} tables: save_catalog ${fmt((performance.now() - saveStarted) / 1000, 1)} s`,
  )
  const one = await datasource('one', names.slice(0, 1))
  await s.api('POST', '/attribute-definitions', {
    key: 'tenant',
    entity_type: 'user',
    value_type: 'integer',
  })
  const ids: string[] = []
  for (let i = 0; i < WIDE_USERS; i++) {
    const u = await s.api('POST', '/users', {
      username: `user${i}`,
      password: PASSWORD,
      attributes: { tenant: i },
    })
    ids.push(u.id)
  }
  const probe = await s.api('POST', '/users', {
    username: 'probe',
    password: PASSWORD,
    attributes: { tenant: 99 },
  })
  ids.push(probe.id)
  for (const ds of [wide, one]) await s.api('PUT', `/datasources/${ds}/users`, { user_ids: ids })
  const filter = await s.api('POST', '/policies', {
    name: 'tenant rows',
    policy_type: 'row_filter',
    targets: [{ schemas: ['wide'], tables: ['*'] }],
    filter_expression: 'tenant_id = {user.tenant}',
  })
  const mask = await s.api('POST', '/policies', {
    name: 'c2 mask',
    policy_type: 'column_mask',
    targets: [{ schemas: ['wide'], tables: ['*'], columns: ['c2'] }],
    mask_expression: "'***'",
  })
  for (const ds of [wide, one]) {
    for (const p of [filter, mask]) {
      await s.api('POST', `/datasources/${ds}/policies`, { policy_id: p.id })
    }
  }
  let version = mask.version as number
  const untilDone = async (jobId: string) => {
    for (;;) {
      const job = await s.api('GET', `/datasources/${wide}/discover/${jobId}`)
      if (job.status === 'failed') throw new Error(`${job.action} failed: ${JSON.stringify(job)}`)
      if (job.status !== 'running') return
      await sleep(100)
    }
  }
  return {
    async tagTable(table, tag) {
      await s.api('PUT', `/datasources/${wide}/tags`, {
        schema_name: 'wide',
        table_name: table,
        tags: [tag],
      })
    },
    async syncWide() {
      const { job_id } = await s.api('POST', `/datasources/${wide}/discover`, {
        action: 'sync_catalog',
      })
      await untilDone(job_id)
    },
    async changePolicy(n) {
      const updated = await s.api('PATCH', `/policies/${mask.id}`, {
        version,
        mask_expression: `'***${n}'`,
      })
      version = updated.version
    },
  }
}
