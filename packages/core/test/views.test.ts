import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { EffectivePolicy } from '../src/policy/policy.types.js'
import type { AccessMode } from '../src/session-context.types.js'
import { createShopDb, readCatalogWithViews } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

/**
 * Views are read with the querying user's policies on every relation they read (security
 * invoker), plus the policies that target the view; what cannot be expanded fails closed.
 * Every case runs the rewritten SQL on the fixture and checks the rows.
 */
const VIEWS_SQL = `
CREATE VIEW public.v_orders AS SELECT id, tenant_id, amount, status FROM public.orders;
CREATE VIEW public.v_totals AS
  SELECT tenant_id, sum(amount) AS total, count(*) AS n FROM public.orders GROUP BY tenant_id;
CREATE VIEW public.v_customers AS SELECT id, name, email, ssn FROM public.customers;
CREATE VIEW public.v_ssn_holders AS SELECT id, name FROM public.customers WHERE ssn IS NOT NULL;
CREATE VIEW public.v_secret AS SELECT id, value FROM public.secrets;
CREATE VIEW public.v_order_secrets AS
  SELECT o.id, o.amount, s.value FROM public.orders o LEFT JOIN public.secrets s ON s.id = o.id;
CREATE VIEW public.v_paid AS SELECT id, amount FROM public.v_orders WHERE status = 'paid';
CREATE VIEW public.v_paid_big AS SELECT id FROM public.v_paid WHERE amount > 15;
CREATE VIEW public.v_union AS
  SELECT id, name AS label, ssn AS extra FROM public.customers
  UNION ALL SELECT id, status, note FROM public.orders;
CREATE VIEW public.v_renamed (order_id, money) AS SELECT id, amount FROM public.orders;
CREATE MATERIALIZED VIEW public.mv_orders AS SELECT id, tenant_id, amount FROM public.orders;
CREATE FUNCTION public.secret_value() RETURNS text LANGUAGE sql AS 'SELECT value FROM public.secrets LIMIT 1';
CREATE VIEW public.v_function AS SELECT id, public.secret_value() AS leaked FROM public.orders;
CREATE VIEW sales.v_region_orders AS SELECT o.id, r.name FROM sales.orders o JOIN sales.regions r ON r.id = o.region_id;
`

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  await db.exec(VIEWS_SQL)
  catalog = await readCatalogWithViews(db)
})
afterAll(() => db.close())

const tenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders', 'customers'] },
  filterExpression: 'tenant_id = {user.tenant}',
})
const maskEmail = policy('column_mask', {
  target: { schemas: ['public'], tables: ['customers'], columns: ['email'] },
  maskExpression: "'***'",
})
const denySsn = policy('column_deny', {
  target: { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
})
const hideSecrets = policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } })

const session = (policies: EffectivePolicy[], accessMode: AccessMode = 'open') =>
  makeSession(catalog, { policies, accessMode })

const ids = (rows: { id: number }[]) => rows.map((r) => r.id)

describe('views read through the querying user policies', () => {
  it('applies a base table row filter to every read of a view', async () => {
    const s = await session([tenantFilter])
    expect(ids(await run(db, s, 'SELECT id FROM v_orders ORDER BY id'))).toEqual([1, 3, 5])
    expect(await run(db, s, 'SELECT tenant_id, total::text, n::int FROM v_totals')).toEqual([
      { tenant_id: 1, total: '90.00', n: 3 },
    ])
    const json = await run<{ j: { tenant_id: number } }>(
      db,
      s,
      'SELECT row_to_json(v) AS j FROM v_orders v',
    )
    expect(json.map((r) => r.j.tenant_id)).toEqual([1, 1, 1])
    // Without the policy the same view returns every tenant.
    const open = await session([])
    expect(ids(await run(db, open, 'SELECT id FROM v_orders ORDER BY id'))).toHaveLength(6)
  })

  it('filters views of views, CTEs, subqueries and joins the same way', async () => {
    const s = await session([tenantFilter])
    expect(ids(await run(db, s, 'SELECT id FROM v_paid ORDER BY id'))).toEqual([1])
    expect(ids(await run(db, s, 'SELECT id FROM v_paid_big ORDER BY id'))).toEqual([])
    for (const sql of [
      'WITH x AS (SELECT * FROM v_orders) SELECT id FROM x ORDER BY id',
      'SELECT id FROM (SELECT * FROM public.v_orders) d ORDER BY id',
      'SELECT a.id FROM v_orders a JOIN v_orders b USING (id) ORDER BY 1',
      'SELECT id FROM orders WHERE id IN (SELECT id FROM v_orders) ORDER BY id',
      'SELECT x.a AS id FROM v_orders AS x(a, b) ORDER BY 1',
    ]) {
      expect(ids(await run(db, s, sql)), sql).toEqual([1, 3, 5])
    }
    expect(await run(db, s, 'SELECT order_id FROM v_renamed ORDER BY 1')).toEqual([
      { order_id: 1 },
      { order_id: 3 },
      { order_id: 5 },
    ])
  })

  it('never evaluates a user predicate on a row the base filter removes', async () => {
    const s = await session([tenantFilter])
    // Tenant 2 owns the order of 20.00: dividing by zero there would prove the filter ran late.
    const rows = await run<{ id: number }>(
      db,
      s,
      'SELECT id FROM v_orders WHERE 1 / (amount - 20) <> 0',
    )
    expect(ids(rows).sort()).toEqual([1, 3, 5])
  })

  it('shows masked values and strips denied columns of the base table', async () => {
    const s = await session([maskEmail, denySsn])
    expect(await run(db, s, 'SELECT * FROM v_customers ORDER BY id LIMIT 1')).toEqual([
      { id: 1, name: 'Alice', email: '***' },
    ])
    const denied = await runError(db, s, 'SELECT ssn FROM v_customers')
    expect(denied.code).toBe('42501')
    expect((await runError(db, s, 'SELECT id, ssn FROM v_customers')).code).toBe('42703')
    // A view that filters on the denied column is hidden, like a missing relation.
    expect(await runError(db, s, 'SELECT * FROM v_ssn_holders')).toEqual({
      code: '42P01',
      message: 'relation "v_ssn_holders" does not exist',
    })
    const open = await session([])
    expect(await run(db, open, 'SELECT count(*)::int AS n FROM v_ssn_holders')).toEqual([{ n: 3 }])
  })

  it('strips a denied column from every branch of a set-operation view', async () => {
    const s = await session([denySsn])
    const rows = await run(db, s, 'SELECT * FROM v_union ORDER BY id, label')
    expect(Object.keys(rows[0] ?? {})).toEqual(['id', 'label'])
    expect(JSON.stringify(rows)).not.toMatch(/\d{3}-\d{2}-\d{4}/)
  })

  it('hides a view that reads a hidden table, with the error of a missing relation', async () => {
    const s = await session([hideSecrets])
    for (const name of ['v_secret', 'v_order_secrets']) {
      expect(await runError(db, s, `SELECT * FROM ${name}`)).toEqual({
        code: '42P01',
        message: `relation "${name}" does not exist`,
      })
    }
    expect(await runError(db, s, "SELECT 'v_secret'::regclass")).toEqual(
      await runError(db, s, "SELECT 'v_no_such'::regclass").then((e) => ({
        ...e,
        message: e.message.replace('v_no_such', 'v_secret'),
      })),
    )
    const listed = await run<{ table_name: string }>(
      db,
      s,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    expect(listed.map((r) => r.table_name)).not.toContain('v_secret')
    expect(listed.map((r) => r.table_name)).toContain('v_orders')
    const views = await run<{ table_name: string }>(
      db,
      s,
      "SELECT table_name FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1",
    )
    expect(views.map((r) => r.table_name)).not.toContain('v_order_secrets')
    const psql = await run<{ relname: string }>(
      db,
      s,
      "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relkind = 'v' ORDER BY 1",
    )
    expect(psql.map((r) => r.relname)).not.toContain('v_secret')
    expect(psql.map((r) => r.relname)).toContain('v_paid')
  })

  it('lists a view only with the columns the user can query', async () => {
    const s = await session([denySsn])
    const columns = await run<{ column_name: string }>(
      db,
      s,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'v_customers' ORDER BY ordinal_position",
    )
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'name', 'email'])
  })

  it('requires a column_allow on the view and its base tables in policy_required mode', async () => {
    const allowOrders = policy('column_allow', {
      target: { schemas: ['public'], tables: ['orders'], columns: ['*'] },
    })
    const allowView = policy('column_allow', {
      target: { schemas: ['public'], tables: ['v_orders'], columns: ['*'] },
    })
    const baseOnly = await session([allowOrders, tenantFilter], 'policy_required')
    expect((await runError(db, baseOnly, 'SELECT * FROM v_orders')).code).toBe('42P01')
    const viewOnly = await session([allowView], 'policy_required')
    expect((await runError(db, viewOnly, 'SELECT * FROM v_orders')).code).toBe('42P01')
    const both = await session([allowOrders, allowView, tenantFilter], 'policy_required')
    expect(ids(await run(db, both, 'SELECT id FROM v_orders ORDER BY id'))).toEqual([1, 3, 5])
    const narrow = policy('column_allow', {
      target: { schemas: ['public'], tables: ['orders'], columns: ['id', 'tenant_id'] },
    })
    const partial = await session([narrow, allowView], 'policy_required')
    expect(await run(db, partial, 'SELECT * FROM v_orders ORDER BY id LIMIT 1')).toEqual([
      { id: 1, tenant_id: 1 },
    ])
  })

  it('applies policies that target the view itself on top of its definition', async () => {
    const onView = policy('row_filter', {
      target: { schemas: ['public'], tables: ['v_orders'] },
      filterExpression: "status = 'paid'",
    })
    const s = await session([tenantFilter, onView])
    expect(ids(await run(db, s, 'SELECT id FROM v_orders ORDER BY id'))).toEqual([1])
    const maskView = policy('column_mask', {
      target: { schemas: ['public'], tables: ['v_orders'], columns: ['amount'] },
      maskExpression: '0',
    })
    const masked = await session([maskView])
    expect(await run(db, masked, 'SELECT DISTINCT amount::int AS a FROM v_orders')).toEqual([
      { a: 0 },
    ])
    const denyView = policy('table_deny', { target: { schemas: ['public'], tables: ['v_*'] } })
    const denied = await session([denyView])
    expect((await runError(db, denied, 'SELECT * FROM v_orders')).code).toBe('42P01')
    expect(await run(db, denied, 'SELECT count(*)::int AS n FROM orders')).toEqual([{ n: 6 }])
  })
})

describe('relations that cannot be expanded fail closed', () => {
  it('hides a materialized view from a user with policies on what it reads', async () => {
    const s = await session([tenantFilter])
    expect(await runError(db, s, 'SELECT * FROM mv_orders')).toEqual({
      code: '42P01',
      message: 'relation "mv_orders" does not exist',
    })
    const open = await session([])
    expect(await run(db, open, 'SELECT count(*)::int AS n FROM mv_orders')).toEqual([{ n: 6 }])
    // An admin can attach policies to the materialized view itself.
    const own = policy('row_filter', {
      target: { schemas: ['public'], tables: ['mv_orders'] },
      filterExpression: 'tenant_id = {user.tenant}',
    })
    const governed = await session([tenantFilter, own])
    expect(await run(db, governed, 'SELECT count(*)::int AS n FROM mv_orders')).toEqual([{ n: 3 }])
  })

  it('refuses a view calling a function outside the allowlist, saying why, to a user with policies', async () => {
    const s = await session([hideSecrets])
    expect(await runError(db, s, 'SELECT * FROM v_function')).toMatchObject({
      code: '42501',
      message: 'view "v_function" calls a function that is not allowed through Palisade',
    })
    const open = await session([])
    expect(await run(db, open, 'SELECT count(*)::int AS n FROM v_function')).toEqual([{ n: 6 }])
  })

  it('hides a view that reads a relation outside the exposed catalog', async () => {
    const partial: Catalog = {
      schemas: catalog.schemas.map((s) => ({
        ...s,
        tables: s.tables.filter((t) => t.name !== 'orders' || s.name !== 'public'),
      })),
    }
    const s = await makeSession(partial, { policies: [tenantFilter] })
    expect((await runError(db, s, 'SELECT * FROM v_orders')).code).toBe('42P01')
    expect((await runError(db, s, 'SELECT * FROM v_paid')).code).toBe('42P01')
    // A user without a policy on what it reads gets the view as it is upstream.
    const open = await makeSession(partial, { policies: [hideSecrets] })
    expect(await run(db, open, 'SELECT count(*)::int AS n FROM v_orders')).toEqual([{ n: 6 }])
  })

  it('refuses TABLESAMPLE on a view as PostgreSQL does', async () => {
    const s = await session([tenantFilter])
    const sql = 'SELECT * FROM v_orders TABLESAMPLE SYSTEM (50)'
    const direct = await db.query(sql).then(
      () => '',
      (e: { code?: string }) => e.code,
    )
    expect(direct).toBe('0A000')
    expect((await runError(db, s, sql)).code).toBe(direct)
  })
})
