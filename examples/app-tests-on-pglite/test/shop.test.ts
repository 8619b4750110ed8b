import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { customerSsn, listCustomers, type Query, revenueByCustomer } from '../src/shop.js'
import { createShopDb, queryAs, readCatalog, sessionFor } from './palisade.js'

describe('the shop module under Palisade policies', () => {
  let db: PGlite
  let asAnn: Query // tenant 1
  let asGus: Query // tenant 2

  beforeAll(async () => {
    db = await createShopDb()
    const catalog = await readCatalog(db)
    const ann = { id: 'u-ann', username: 'ann', roles: [], attributes: { tenant: 1 } }
    const gus = { id: 'u-gus', username: 'gus', roles: [], attributes: { tenant: 2 } }
    asAnn = queryAs(db, await sessionFor(ann, catalog))
    asGus = queryAs(db, await sessionFor(gus, catalog))
  })
  afterAll(async () => {
    await db?.close()
  })

  it('lists only the caller’s tenant, with masked emails', async () => {
    expect(await listCustomers(asAnn)).toEqual([
      { id: 1, name: 'Ann Archer', email: 'a***@acme.test' },
      { id: 2, name: 'Abe Adams', email: 'a***@acme.test' },
    ])
    expect(await listCustomers(asGus)).toEqual([
      { id: 3, name: 'Gus Grant', email: 'g***@globex.test' },
    ])
  })

  it('filters both sides of a join before aggregating', async () => {
    expect(await revenueByCustomer(asAnn)).toEqual([
      { name: 'Abe Adams', revenue: 40 },
      { name: 'Ann Archer', revenue: 40 },
    ])
    expect(await revenueByCustomer(asGus)).toEqual([{ name: 'Gus Grant', revenue: 70 }])
  })

  it('refuses to read a denied column with 42501, even for the caller’s own rows', async () => {
    await expect(customerSsn(asAnn, 1)).rejects.toMatchObject({
      code: '42501',
      message: 'permission denied for column(s): ssn',
    })
  })

  it('refuses writes with 25006 before they reach the database', async () => {
    await expect(asGus('DELETE FROM orders')).rejects.toMatchObject({ code: '25006' })
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')
    expect(rows).toEqual([{ n: 4 }])
  })
})
