import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rewrite } from '../src/rewrite.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy } from './fixtures/session.js'

let db: PGlite
let session: CompiledSession

beforeAll(async () => {
  db = await createShopDb()
  const filter = policy('row_filter', {
    target: { schemas: ['public'], tables: ['orders'] },
    filterExpression: 'tenant_id = 1',
  })
  session = await makeSession(await readCatalog(db, { sales: 'commerce' }), { policies: [filter] })
})
afterAll(() => db.close())

describe('query facts for decision functions (docs/decision-functions.md#the-context-ctx ctx.query)', () => {
  it('describes tables as {datasource, schema, table} with visible schema names', () => {
    const [statement] = rewrite(
      'SELECT o.id FROM orders o JOIN commerce.regions r ON r.id = o.id',
      session,
    ).statements
    expect(statement?.facts?.tables).toEqual([
      { datasource: 'shop', schema: 'public', table: 'orders' },
      { datasource: 'shop', schema: 'commerce', table: 'regions' },
    ])
    expect(statement?.facts?.join_count).toBe(1)
    expect(statement?.facts?.statement_type).toBe('SELECT')
  })

  it('reports columns, aggregation, subqueries and WHERE', () => {
    const [plain] = rewrite('SELECT id, status FROM orders', session).statements
    expect(plain?.facts).toMatchObject({
      columns: ['id', 'status'],
      has_aggregation: false,
      has_subquery: false,
      has_where: false,
    })
    const [rich] = rewrite(
      'SELECT status, count(*) FROM orders WHERE id IN (SELECT order_id FROM payments) GROUP BY status',
      session,
    ).statements
    expect(rich?.facts).toMatchObject({
      has_aggregation: true,
      has_subquery: true,
      has_where: true,
    })
    expect(rich?.facts?.columns).toEqual(expect.arrayContaining(['status', 'id', 'order_id']))
  })

  it('records the policies applied with id, version and name', () => {
    const [statement] = rewrite('SELECT id FROM orders', session).statements
    expect(statement?.policiesApplied).toEqual([
      {
        policy_id: expect.any(String),
        version: 1,
        name: expect.stringContaining('row_filter'),
        decision: null,
      },
    ])
    expect(rewrite('SELECT 1', session).statements[0]?.policiesApplied).toEqual([])
  })

  it('serves a repeated statement from the rewrite cache', () => {
    const first = rewrite('SELECT id FROM orders WHERE id = 1', session)
    expect(rewrite('SELECT id FROM orders WHERE id = 1', session)).toBe(first)
  })
})
