import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const hideSecrets = policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } })

describe('hidden and missing tables', () => {
  it('answers a hidden table exactly like a missing one, never naming a policy', async () => {
    const s = await makeSession(catalog, { policies: [hideSecrets] })
    const hidden = await runError(db, s, 'SELECT * FROM secrets')
    const missing = await runError(db, s, 'SELECT * FROM no_such_table')
    expect(hidden).toEqual({ code: '42P01', message: 'relation "secrets" does not exist' })
    expect(missing).toEqual({ code: '42P01', message: 'relation "no_such_table" does not exist' })
    expect(hidden.message).not.toContain(hideSecrets.name)
  })

  it('answers the same for EXPLAIN, subqueries, CTEs and qualified names', async () => {
    const s = await makeSession(catalog, { policies: [hideSecrets] })
    for (const sql of [
      'EXPLAIN SELECT * FROM secrets',
      'SELECT 1 WHERE EXISTS (SELECT 1 FROM secrets)',
      'WITH x AS (SELECT * FROM public.secrets) SELECT 1',
      'SELECT * FROM shop.public.secrets',
    ]) {
      expect((await runError(db, s, sql)).code, sql).toBe('42P01')
    }
  })

  it('treats unexposed upstream tables as missing', async () => {
    const partial: Catalog = { schemas: catalog.schemas.filter((s) => s.name === 'hr') }
    const s = await makeSession(partial)
    expect((await runError(db, s, 'SELECT * FROM public.orders')).code).toBe('42P01')
  })

  it('matches targets by exact, prefix and * patterns, case-sensitively (rule 10)', async () => {
    const prefix = policy('table_deny', { target: { schemas: ['pub*'], tables: ['ord*'] } })
    const s = await makeSession(catalog, { policies: [prefix] })
    expect((await runError(db, s, 'SELECT * FROM orders')).code).toBe('42P01')
    expect(await run(db, s, 'SELECT count(*)::int AS n FROM products')).toEqual([{ n: 2 }])
    const caseSensitive = policy('table_deny', {
      target: { schemas: ['public'], tables: ['Orders'] },
    })
    const s2 = await makeSession(catalog, { policies: [caseSensitive] })
    expect(await run(db, s2, 'SELECT count(*)::int AS n FROM orders')).toEqual([{ n: 6 }])
  })

  it('lets a deny win over a permit from another source (rule 2)', async () => {
    const allow = policy('column_allow', {
      target: { schemas: ['public'], tables: ['secrets'], columns: ['*'] },
    })
    const s = await makeSession(catalog, {
      accessMode: 'policy_required',
      policies: [allow, hideSecrets],
    })
    expect((await runError(db, s, 'SELECT * FROM secrets')).code).toBe('42P01')
  })
})

describe('information_schema shows only what the user may see (docs/rules.md rule 16)', () => {
  it('lists visible tables and hides table_deny targets', async () => {
    const s = await makeSession(catalog, { policies: [hideSecrets] })
    const rows = await run<{ table_name: string }>(
      db,
      s,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    expect(rows.map((r) => r.table_name)).toEqual([
      'customers',
      'orders',
      'payments',
      'products',
      'refunds',
      'tenants',
    ])
  })

  it('lists columns without denied ones and shows the datasource as catalog', async () => {
    const deny = policy('column_deny', {
      target: { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
    })
    const s = await makeSession(catalog, { policies: [deny] })
    const rows = await run<{ column_name: string; table_catalog: string }>(
      db,
      s,
      "SELECT column_name, table_catalog FROM information_schema.columns WHERE table_name = 'customers' ORDER BY ordinal_position",
    )
    expect(rows.map((r) => r.column_name)).toEqual(['id', 'tenant_id', 'name', 'email', 'region'])
    expect(new Set(rows.map((r) => r.table_catalog))).toEqual(new Set(['shop']))
  })

  it('in policy_required mode lists only tables a column_allow grants, with their allowed columns', async () => {
    const allow = policy('column_allow', {
      target: { schemas: ['public'], tables: ['products'], columns: ['id', 'name'] },
    })
    const s = await makeSession(catalog, { accessMode: 'policy_required', policies: [allow] })
    const tables = await run<{ table_name: string }>(
      db,
      s,
      'SELECT table_name FROM information_schema.tables',
    )
    expect(tables.map((r) => r.table_name)).toEqual(['products'])
    const columns = await run<{ column_name: string }>(
      db,
      s,
      'SELECT column_name FROM information_schema.columns ORDER BY ordinal_position',
    )
    expect(columns.map((r) => r.column_name)).toEqual(['id', 'name'])
    const schemata = await run<{ schema_name: string }>(
      db,
      s,
      'SELECT schema_name FROM information_schema.schemata',
    )
    expect(schemata.map((r) => r.schema_name)).toEqual(['public'])
  })

  it('shows schema aliases instead of upstream names', async () => {
    const s = await makeSession(await readCatalog(db, { sales: 'commerce' }))
    const rows = await run<{ table_schema: string }>(
      db,
      s,
      "SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name = 'regions'",
    )
    expect(rows).toEqual([{ table_schema: 'commerce' }])
  })

  it('answers name filters on information_schema (taken into the view) as the listings do', async () => {
    const deny = policy('column_deny', {
      target: { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
    })
    const s = await makeSession(catalog, { policies: [hideSecrets, deny] })
    const q = (sql: string) => run<Record<string, unknown>>(db, s, sql)
    expect(
      await q("SELECT table_name FROM information_schema.tables WHERE table_name = 'secrets'"),
    ).toEqual([])
    expect(
      await q("SELECT column_name FROM information_schema.columns WHERE table_name = 'secrets'"),
    ).toEqual([])
    expect(
      await q(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'ssn'",
      ),
    ).toEqual([])
    expect(
      await q(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name IN ('customers', 'secrets') AND column_name IN ('email', 'ssn', 'clearance')",
      ),
    ).toEqual([{ column_name: 'email' }])
    // An aliased schema answers to its alias only, not to its upstream name.
    const aliased = await makeSession(await readCatalog(db, { sales: 'commerce' }))
    const tables = (schema: string) =>
      run(
        db,
        aliased,
        `SELECT table_name FROM information_schema.tables WHERE table_schema = '${schema}' AND table_name = 'regions'`,
      )
    expect(await tables('commerce')).toEqual([{ table_name: 'regions' }])
    expect(await tables('sales')).toEqual([])
  })

  it('refuses information_schema views and pg_catalog relations it does not virtualize', async () => {
    const s = await makeSession(catalog)
    expect((await runError(db, s, 'SELECT * FROM information_schema.role_table_grants')).code).toBe(
      '42P01',
    )
    expect((await runError(db, s, 'SELECT * FROM pg_catalog.pg_stats')).code).toBe('42P01')
  })
})
