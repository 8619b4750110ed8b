import { expect, it } from 'vitest'
import { describeOnDatabases } from '../fixtures/databases.js'
import { makeSession, policy, run, runError } from '../fixtures/session.js'

const tenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders'] },
  filterExpression: 'tenant_id = {user.tenant}',
})
const hideSecrets = policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } })
const ids = (rows: { id: number }[]) => rows.map((r) => r.id).sort((a, b) => a - b)

describeOnDatabases('CTE, alias and identifier games', (db) => {
  it('an alias named like another table does not borrow or lose its policy', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    expect(ids(await run(db(), session, 'SELECT products.id FROM orders AS products'))).toEqual([
      1, 3, 5,
    ])
    expect(ids(await run(db(), session, 'SELECT orders.id FROM products AS orders'))).toEqual([
      1, 2,
    ])
  })

  it('a CTE named like a protected table, nested in a subquery, still reads the filtered table', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    const sql =
      'SELECT id FROM (WITH orders AS (SELECT * FROM public.orders) SELECT id FROM orders) x'
    expect(ids(await run(db(), session, sql))).toEqual([1, 3, 5])
    const shadowOutside = 'WITH x AS (SELECT 1) SELECT id FROM (SELECT id FROM orders) orders'
    expect(ids(await run(db(), session, shadowOutside))).toEqual([1, 3, 5])
  })

  it('a CTE that refers to a later sibling (not recursive) reaches the table, filtered', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    const sql = 'WITH a AS (SELECT id FROM orders), orders AS (SELECT 100 AS id) SELECT id FROM a'
    expect(ids(await run(db(), session, sql))).toEqual([1, 3, 5])
  })

  it('quoted mixed-case CTE names survive the rewrite', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    const sql = 'WITH "MyOrders" AS (SELECT * FROM orders) SELECT "MyOrders".id FROM "MyOrders"'
    expect(ids(await run(db(), session, sql))).toEqual([1, 3, 5])
  })

  it('quoted names that differ only by case do not match a lowercase table', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    expect((await runError(db(), session, 'SELECT * FROM "Orders"')).code).toBe('42P01')
    expect((await runError(db(), session, 'SELECT * FROM "SECRETS"')).code).toBe('42P01')
  })

  it('unicode-escaped identifiers resolve to the same table and policy', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter, hideSecrets] })
    expect(ids(await run(db(), session, 'SELECT id FROM U&"\\006Frders"'))).toEqual([1, 3, 5])
    expect((await runError(db(), session, 'SELECT * FROM U&"\\0073ecrets"')).code).toBe('42P01')
  })

  it('identifiers longer than 63 characters are truncated the way PostgreSQL does and stay hidden', async () => {
    const session = await makeSession(db().catalog, { policies: [hideSecrets] })
    const long = `secrets${'x'.repeat(70)}`
    expect((await runError(db(), session, `SELECT * FROM ${long}`)).code).toBe('42P01')
    const longAlias = `o${'a'.repeat(80)}`
    const rows = await run(
      db(),
      session,
      `SELECT ${longAlias}.id FROM orders ${longAlias} WHERE ${longAlias}.id = 1`,
    )
    expect(rows).toEqual([{ id: 1 }])
  })
})
