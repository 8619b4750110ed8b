import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog, ColumnAnchor, TableRelationship } from '../src/catalog.types.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const tenant = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders', 'payments', 'refunds'] },
  filterExpression: 'tenant_id = {user.tenant}',
})
const paymentsToOrders: TableRelationship = {
  id: 'rel-payments-orders',
  childSchema: 'public',
  childTable: 'payments',
  childColumn: 'order_id',
  parentSchema: 'public',
  parentTable: 'orders',
  parentColumn: 'id',
}
const refundsToPayments: TableRelationship = {
  id: 'rel-refunds-payments',
  childSchema: 'public',
  childTable: 'refunds',
  childColumn: 'payment_id',
  parentSchema: 'public',
  parentTable: 'payments',
  parentColumn: 'id',
}
const walk = (table: string, relationshipId: string): ColumnAnchor => ({
  schema: 'public',
  table,
  resolvedColumn: 'tenant_id',
  relationshipId,
})

describe('transitive tenancy through column anchors (docs/policies.md#transitive-tenancy)', () => {
  it('filters a child table through its parent as a semi-join, excluding NULL and dangling keys', async () => {
    const s = await makeSession(catalog, {
      policies: [tenant],
      relationships: [paymentsToOrders],
      anchors: [walk('payments', paymentsToOrders.id)],
    })
    const rows = await run<{ id: number }>(db, s, 'SELECT id FROM payments ORDER BY id')
    expect(rows.map((r) => r.id)).toEqual([1, 3])
  })

  it('walks two hops', async () => {
    const s = await makeSession(catalog, {
      policies: [tenant],
      relationships: [paymentsToOrders, refundsToPayments],
      anchors: [walk('payments', paymentsToOrders.id), walk('refunds', refundsToPayments.id)],
    })
    const rows = await run<{ id: number }>(db, s, 'SELECT id FROM refunds ORDER BY id')
    expect(rows.map((r) => r.id)).toEqual([1])
  })

  it('resolves an alias anchor to another column of the same table', async () => {
    const byEmployeeTenant = policy('row_filter', {
      target: { schemas: ['hr'], tables: ['employees'] },
      filterExpression: "owner = 'acme'",
    })
    const alias: ColumnAnchor = {
      schema: 'hr',
      table: 'employees',
      resolvedColumn: 'owner',
      actualColumn: 'tenant',
    }
    const s = await makeSession(catalog, { policies: [byEmployeeTenant], anchors: [alias] })
    expect(await run(db, s, 'SELECT name FROM hr.employees')).toEqual([{ name: 'Eve' }])
  })

  it('fails closed when there is no anchor, the alias target is missing, or the walk is too long', async () => {
    const noAnchor = await makeSession(catalog, { policies: [tenant] })
    expect(await runError(db, noAnchor, 'SELECT id FROM payments')).toEqual({
      code: 'XX000',
      message: 'access rules could not be applied',
    })
    const badAlias = await makeSession(catalog, {
      policies: [tenant],
      anchors: [
        { schema: 'public', table: 'payments', resolvedColumn: 'tenant_id', actualColumn: 'nope' },
      ],
    })
    expect((await runError(db, badAlias, 'SELECT id FROM payments')).code).toBe('XX000')
    const cycle: TableRelationship = {
      ...paymentsToOrders,
      id: 'cycle',
      childTable: 'refunds',
      childColumn: 'payment_id',
      parentTable: 'refunds',
      parentColumn: 'id',
    }
    const looping = await makeSession(catalog, {
      policies: [tenant],
      relationships: [cycle],
      anchors: [walk('refunds', 'cycle')],
    })
    expect((await runError(db, looping, 'SELECT id FROM refunds')).code).toBe('XX000')
  })
})
