import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { EffectivePolicy } from '../src/policy/policy.types.js'
import { rewrite } from '../src/rewrite.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog
beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const mask = (schema: string, table: string, column: string, maskExpression: string) =>
  policy('column_mask', {
    target: { schemas: [schema], tables: [table], columns: [column] },
    maskExpression,
  })

const KEY_A = 'a'.repeat(64)
const KEY_B = 'b'.repeat(64)

async function rows(policies: EffectivePolicy[], sql: string, maskKey = KEY_A) {
  return run(db, await makeSession(catalog, { policies, maskKey }), sql)
}

describe('library masks expanded by the rewriter', () => {
  it('truncates dates, buckets numbers of every width and keeps each column type', async () => {
    const policies = [
      mask('public', 'orders', 'created_at', "mask.truncate(created_at, 'month')"),
      mask('public', 'orders', 'amount', 'mask.bucket(amount, 25)'),
      mask('hr', 'employees', 'salary', 'mask.bucket(salary, 1000)'),
    ]
    const orders = await rows(
      policies,
      'SELECT id, amount, created_at::text AS d FROM orders ORDER BY id LIMIT 3',
    )
    expect(orders).toEqual([
      { id: 1, amount: '0', d: '2026-01-01' },
      { id: 2, amount: '0', d: '2026-01-01' },
      { id: 3, amount: '25', d: '2026-01-01' },
    ])
    const types = await rows(
      policies,
      'SELECT pg_typeof(created_at)::text AS d, pg_typeof(amount)::text AS a FROM orders LIMIT 1',
    )
    expect(types).toEqual([{ d: 'date', a: 'numeric' }])
  })

  it('nests library masks, and keeps a NULL a NULL', async () => {
    const policies = [
      mask('public', 'customers', 'ssn', "mask.partial(mask.digits(ssn, '#'), 3, 0)"),
    ]
    expect(await rows(policies, 'SELECT id, ssn FROM customers ORDER BY id')).toEqual([
      { id: 1, ssn: '###********' },
      { id: 2, ssn: '###********' },
      { id: 3, ssn: '###********' },
      { id: 4, ssn: null },
    ])
  })

  it('replaces values with a constant or NULL of the column type', async () => {
    const policies = [
      mask('public', 'customers', 'region', "mask.constant('hidden')"),
      mask('public', 'customers', 'tenant_id', 'mask.null()'),
    ]
    expect(await rows(policies, 'SELECT DISTINCT region, tenant_id FROM customers')).toEqual([
      { region: 'hidden', tenant_id: null },
    ])
  })

  it('takes boolean and number literals as constants, cast to the column type', async () => {
    const policies = [
      mask('public', 'orders', 'status', 'mask.constant(true)'),
      mask('public', 'orders', 'note', 'mask.constant(-1)'),
    ]
    expect(await rows(policies, 'SELECT DISTINCT status, note FROM orders')).toEqual([
      { status: 'true', note: '-1' },
    ])
  })

  it('hashes with the datasource key: same key, same hash; another key, another hash', async () => {
    const policies = [mask('public', 'customers', 'email', 'mask.hash(email)')]
    const sql = 'SELECT email FROM customers ORDER BY id LIMIT 1'
    const [a1] = await rows(policies, sql, KEY_A)
    const [a2] = await rows(policies, sql, KEY_A)
    const [b] = await rows(policies, sql, KEY_B)
    expect(a1?.['email']).toMatch(/^[0-9a-f]{64}$/)
    expect(a2).toEqual(a1)
    expect(b?.['email']).not.toBe(a1?.['email'])
  })

  it('fails closed without a key, or when the column cannot carry the result', async () => {
    const hashed = [mask('public', 'customers', 'email', 'mask.hash(email)')]
    const noKey = await makeSession(catalog, { policies: hashed })
    // The client reads a fixed message; the audit gets the cause.
    const failure = (session: Awaited<ReturnType<typeof makeSession>>, sql: string) => {
      try {
        rewrite(sql, session)
      } catch (error) {
        return error as { message: string; auditMessage: string }
      }
      throw new Error(`${sql} was rewritten`)
    }
    const missing = failure(noKey, 'SELECT email FROM customers')
    expect(missing.message).toBe('access rules could not be applied')
    expect(missing.auditMessage).toMatch(/mask key/)
    const wrongType = await makeSession(catalog, {
      policies: [mask('public', 'customers', 'id', 'mask.partial(id, 1, 1)')],
    })
    expect(failure(wrongType, 'SELECT id FROM customers').auditMessage).toMatch(
      /needs a text column, not integer/,
    )
    // The other columns never come out unmasked: the scan fails as a whole.
    expect(failure(wrongType, 'SELECT name FROM customers').auditMessage).toMatch(/text column/)
    expect((await runError(db, wrongType, 'SELECT name FROM customers')).message).toBe(
      'access rules could not be applied',
    )
  })

  it('refuses EXPLAIN where the plan could print the key', async () => {
    const session = await makeSession(catalog, {
      policies: [mask('public', 'customers', 'email', 'mask.hash(email)')],
      maskKey: KEY_A,
    })
    expect(() => rewrite('EXPLAIN SELECT email FROM customers', session)).toThrow(
      /EXPLAIN is not available/,
    )
    expect(rewrite('EXPLAIN SELECT id FROM products', session).statements).toHaveLength(1)
  })
})
