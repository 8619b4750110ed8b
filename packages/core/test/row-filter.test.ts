import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog
let tenantOne: CompiledSession

const tenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders', 'customers'] },
  filterExpression: 'tenant_id = {user.tenant}',
})

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
  tenantOne = await makeSession(catalog, { policies: [tenantFilter] })
})
afterAll(() => db.close())

const ids = (rows: { id: number }[]) => rows.map((r) => r.id).sort((a, b) => a - b)

describe('row filters apply at every scan (docs/policies.md#evaluation-rules-with-examples rules 1, 6, 7)', () => {
  it('filters a plain select to the user tenant', async () => {
    expect(ids(await run(db, tenantOne, 'SELECT id FROM orders'))).toEqual([1, 3, 5])
  })

  it('filters both sides of a join independently', async () => {
    const rows = await run<{ o: number; c: number }>(
      db,
      tenantOne,
      'SELECT o.id AS o, c.id AS c FROM orders o JOIN customers c ON true ORDER BY 1, 2',
    )
    expect(new Set(rows.map((r) => r.o))).toEqual(new Set([1, 3, 5]))
    expect(new Set(rows.map((r) => r.c))).toEqual(new Set([1, 3]))
  })

  it('filters inside CTEs, subqueries in FROM, WHERE and the select list', async () => {
    const sqls = [
      'WITH x AS (SELECT * FROM orders) SELECT id FROM x',
      'SELECT id FROM (SELECT * FROM orders) s',
      'SELECT id FROM tenants t WHERE id IN (SELECT tenant_id FROM orders)',
      'SELECT (SELECT max(id) FROM orders) AS id',
      'SELECT id FROM orders WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = orders.customer_id)',
    ]
    expect(ids(await run(db, tenantOne, sqls[0] as string))).toEqual([1, 3, 5])
    expect(ids(await run(db, tenantOne, sqls[1] as string))).toEqual([1, 3, 5])
    expect(ids(await run(db, tenantOne, sqls[2] as string))).toEqual([1])
    expect(ids(await run(db, tenantOne, sqls[3] as string))).toEqual([5])
    expect(ids(await run(db, tenantOne, sqls[4] as string))).toEqual([1, 3, 5])
  })

  it('filters LATERAL subqueries and every arm of UNION, INTERSECT and EXCEPT', async () => {
    const lateral = await run<{ id: number }>(
      db,
      tenantOne,
      'SELECT l.id FROM tenants t, LATERAL (SELECT id FROM orders WHERE orders.tenant_id = t.id) l',
    )
    expect(ids(lateral)).toEqual([1, 3, 5])
    expect(
      ids(await run(db, tenantOne, 'SELECT id FROM orders UNION SELECT id FROM customers')),
    ).toEqual([1, 3, 5])
    expect(
      ids(await run(db, tenantOne, 'SELECT id FROM products INTERSECT SELECT id FROM orders')),
    ).toEqual([1])
    expect(
      ids(await run(db, tenantOne, 'SELECT id FROM products EXCEPT SELECT id FROM orders')),
    ).toEqual([2])
  })

  it('does not change which policy matches when the table is aliased', async () => {
    expect(ids(await run(db, tenantOne, 'SELECT secrets.id FROM orders AS secrets'))).toEqual([
      1, 3, 5,
    ])
  })

  it('lets a CTE named like a protected table shadow it, but filters the table the CTE reads', async () => {
    const rows = await run<{ id: number }>(
      db,
      tenantOne,
      'WITH orders AS (SELECT id FROM customers) SELECT id FROM orders',
    )
    expect(ids(rows)).toEqual([1, 3])
    const own = await run<{ id: number }>(
      db,
      tenantOne,
      'WITH orders AS (SELECT * FROM public.orders) SELECT id FROM orders',
    )
    expect(ids(own)).toEqual([1, 3, 5])
  })

  it('filters a recursive CTE that reads a protected table', async () => {
    const rows = await run<{ id: number }>(
      db,
      tenantOne,
      'WITH RECURSIVE r(id) AS (SELECT min(id) FROM orders UNION ALL SELECT o.id FROM orders o JOIN r ON o.id > r.id AND o.id <= r.id + 2) SELECT DISTINCT id FROM r',
    )
    expect(ids(rows)).toEqual([1, 3, 5])
  })

  it('filters on raw values while aggregates, HAVING and windows see only permitted rows', async () => {
    const [agg] = await run<{ n: number; s: string }>(
      db,
      tenantOne,
      'SELECT count(*)::int AS n, sum(amount)::text AS s FROM orders',
    )
    expect(agg).toEqual({ n: 3, s: '90.00' })
    const having = await run<{ status: string }>(
      db,
      tenantOne,
      'SELECT status FROM orders GROUP BY status HAVING count(*) >= 1 ORDER BY 1',
    )
    expect(having.map((r) => r.status)).toEqual(['open', 'paid', 'refunded'])
    const window = await run<{ id: number; rn: string }>(
      db,
      tenantOne,
      'SELECT id, row_number() OVER (ORDER BY amount DESC) AS rn FROM orders ORDER BY id',
    )
    expect(window.map((r) => [r.id, Number(r.rn)])).toEqual([
      [1, 3],
      [3, 2],
      [5, 1],
    ])
  })

  it('ANDs several row filters from different policies (rule 1)', async () => {
    const paid = policy('row_filter', {
      target: { schemas: ['public'], tables: ['orders'] },
      filterExpression: "status = 'paid' OR status = 'open'",
    })
    const session = await makeSession(catalog, { policies: [tenantFilter, paid] })
    expect(ids(await run(db, session, 'SELECT id FROM orders'))).toEqual([1, 3])
  })

  it('applies a filter on a column the query does not select (rule 8)', async () => {
    expect(ids(await run(db, tenantOne, 'SELECT id FROM orders WHERE amount > 20'))).toEqual([3, 5])
  })

  it('fails with a plan error when the filter column is not on the table and has no anchor', async () => {
    const broken = policy('row_filter', {
      target: { schemas: ['public'], tables: ['products'] },
      filterExpression: 'tenant_id = {user.tenant}',
    })
    const session = await makeSession(catalog, { policies: [broken] })
    await expect(run(db, session, 'SELECT * FROM products')).rejects.toMatchObject({
      code: 'XX000',
      message: 'access rules could not be applied',
    })
  })
})

describe('name resolution (rules 11, 12, 13)', () => {
  it('enforces bare, two-part and three-part references identically', async () => {
    for (const name of [
      'orders',
      'public.orders',
      'shop.public.orders',
      '"orders"',
      'shop."public".orders',
    ]) {
      expect(ids(await run(db, tenantOne, `SELECT id FROM ${name}`))).toEqual([1, 3, 5])
    }
  })

  it('sends two-part schema.table names upstream, never a catalog prefix', async () => {
    const { rewrite } = await import('../src/rewrite.js')
    const [statement] = rewrite('SELECT id FROM shop.public.orders', tenantOne).statements
    expect(statement?.sql).toContain('public.orders')
    expect(statement?.sql).not.toContain('shop.')
  })

  it('rejects a three-part name whose catalog is not the datasource', async () => {
    await expect(run(db, tenantOne, 'SELECT id FROM other.public.orders')).rejects.toMatchObject({
      code: '0A000',
    })
  })

  it('applies a policy on a specific schema to bare references through the default schema', async () => {
    const salesFilter = policy('row_filter', {
      target: { schemas: ['sales'], tables: ['orders'] },
      filterExpression: 'region_id = 1',
    })
    const session = await makeSession(catalog, { policies: [salesFilter] })
    expect(ids(await run(db, session, 'SELECT id FROM sales.orders'))).toEqual([1])
    // The bare name resolves to public.orders, which this policy does not target.
    expect(ids(await run(db, session, 'SELECT id FROM orders'))).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('uses the alphabetically first schema as default when public is not exposed', async () => {
    const noPublic: Catalog = { schemas: catalog.schemas.filter((s) => s.name !== 'public') }
    const session = await makeSession(noPublic)
    expect(session.defaultSchema).toBe('hr')
    expect(ids(await run(db, session, 'SELECT id FROM employees'))).toEqual([1, 2])
  })

  it('resolves a schema alias for users while policies keep matching the upstream name', async () => {
    const aliased = await readCatalog(db, { sales: 'commerce' })
    const salesFilter = policy('row_filter', {
      target: { schemas: ['sales'], tables: ['regions'] },
      filterExpression: 'tenant_id = {user.tenant}',
    })
    const session = await makeSession(aliased, { policies: [salesFilter] })
    expect(ids(await run(db, session, 'SELECT id FROM commerce.regions'))).toEqual([1])
    await expect(run(db, session, 'SELECT id FROM sales.regions')).rejects.toMatchObject({
      code: '42P01',
    })
  })

  it('keeps schema-qualified column references working after wrapping', async () => {
    expect(ids(await run(db, tenantOne, 'SELECT public.orders.id FROM public.orders'))).toEqual([
      1, 3, 5,
    ])
  })
})
