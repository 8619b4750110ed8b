import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { EffectivePolicy } from '../src/policy/policy.types.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const customers = { schemas: ['public'], tables: ['customers'] }
const denySsn = policy('column_deny', { target: { ...customers, columns: ['ssn'] } })
const maskEmail = policy('column_mask', {
  target: { ...customers, columns: ['email'] },
  maskExpression: "'***' || right(email, 5)",
})
const tenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['customers', 'orders'] },
  filterExpression: 'tenant_id = {user.tenant}',
})

const session = (...policies: EffectivePolicy[]) => makeSession(catalog, { policies })

describe('column_deny', () => {
  it('removes the column from SELECT * and keeps the rest', async () => {
    const rows = await run(
      db,
      await session(denySsn),
      'SELECT * FROM customers ORDER BY id LIMIT 1',
    )
    expect(Object.keys(rows[0] ?? {})).toEqual(['id', 'tenant_id', 'name', 'email', 'region'])
  })

  it('answers 42703 column does not exist for an explicit reference among other columns', async () => {
    const error = await runError(db, await session(denySsn), 'SELECT name, ssn FROM customers')
    expect(error.code).toBe('42703')
    expect(error.message).toMatch(/column "ssn" does not exist/)
  })

  it('answers 42703 for a denied column in WHERE, ORDER BY, HAVING, subqueries and window ORDER BY', async () => {
    const s = await session(denySsn)
    for (const sql of [
      'SELECT name FROM customers WHERE ssn IS NULL',
      'SELECT name FROM customers ORDER BY ssn',
      'SELECT count(*) FROM customers GROUP BY region HAVING max(ssn) > 1',
      'SELECT name FROM (SELECT name, ssn FROM customers) x',
      'SELECT name, rank() OVER (ORDER BY ssn) FROM customers',
      'SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.ssn = o.note',
    ]) {
      expect((await runError(db, s, sql)).code, sql).toBe('42703')
    }
  })

  it('answers 42501 naming the columns when every selected column is denied, before running', async () => {
    const error = await runError(db, await session(denySsn), 'SELECT ssn FROM customers')
    expect(error).toEqual({ code: '42501', message: 'permission denied for column(s): ssn' })
    const both = policy('column_deny', { target: { ...customers, columns: ['ssn', 'email'] } })
    const second = await runError(db, await session(both), 'SELECT c.ssn, email FROM customers c')
    expect(second).toEqual({
      code: '42501',
      message: 'permission denied for column(s): ssn, email',
    })
  })

  it('answers 42501 for SELECT * when every column of the table is denied', async () => {
    const all = policy('column_deny', {
      target: { schemas: ['public'], tables: ['secrets'], columns: ['*'] },
    })
    const error = await runError(db, await session(all), 'SELECT * FROM secrets')
    expect(error.code).toBe('42501')
  })

  it('scopes a deny to its table: denying name on customers keeps products.name in a join (rule 15)', async () => {
    const denyName = policy('column_deny', { target: { ...customers, columns: ['name'] } })
    const rows = await run<{ name: string }>(
      db,
      await session(denyName),
      'SELECT p.name FROM products p JOIN customers c ON c.id = p.id ORDER BY p.id',
    )
    expect(rows.map((r) => r.name)).toEqual(['Widget', 'Gadget'])
  })
})

describe('column_mask', () => {
  it('shows masked values everywhere above the scan (rule 6)', async () => {
    const s = await session(maskEmail)
    const rows = await run<{ email: string }>(db, s, 'SELECT email FROM customers ORDER BY id')
    expect(rows.map((r) => r.email)).toEqual(['***.test', '***.test', '***.test', '***.test'])
    const grouped = await run<{ email: string; n: number }>(
      db,
      s,
      'WITH c AS (SELECT email FROM customers) SELECT email, count(*)::int AS n FROM c GROUP BY email',
    )
    expect(grouped).toEqual([{ email: '***.test', n: 4 }])
    const agg = await run<{ e: string }>(
      db,
      s,
      "SELECT string_agg(email, ',' ORDER BY email) AS e FROM customers",
    )
    expect(agg[0]?.e).not.toContain('@')
  })

  it('evaluates the row filter on raw values while the output is masked', async () => {
    const maskTenant = policy('column_mask', {
      target: { ...customers, columns: ['tenant_id'] },
      maskExpression: '0',
    })
    const rows = await run<{ id: number; tenant_id: number }>(
      db,
      await session(tenantFilter, maskTenant),
      'SELECT id, tenant_id FROM customers ORDER BY id',
    )
    expect(rows).toEqual([
      { id: 1, tenant_id: 0 },
      { id: 3, tenant_id: 0 },
    ])
  })

  it('applies only the mask with the lowest priority number (rule 3)', async () => {
    const low = policy('column_mask', {
      target: { ...customers, columns: ['name'] },
      maskExpression: "'low'",
      priority: 5,
    })
    const high = policy('column_mask', {
      target: { ...customers, columns: ['name'] },
      maskExpression: "'high'",
      priority: 50,
    })
    const rows = await run<{ name: string }>(
      db,
      await session(high, low),
      'SELECT DISTINCT name FROM customers',
    )
    expect(rows).toEqual([{ name: 'low' }])
  })

  it('lets deny win over mask on the same column (rule 5)', async () => {
    const maskSsn = policy('column_mask', {
      target: { ...customers, columns: ['ssn'] },
      maskExpression: "'x'",
    })
    const s = await session(maskSsn, denySsn)
    const rows = await run(db, s, 'SELECT * FROM customers LIMIT 1')
    expect(Object.keys(rows[0] ?? {})).not.toContain('ssn')
    expect((await runError(db, s, 'SELECT id, ssn FROM customers')).code).toBe('42703')
  })
})

describe('column_allow', () => {
  it('restricts an open-mode table to the allowed columns', async () => {
    const allow = policy('column_allow', { target: { ...customers, columns: ['id', 'name'] } })
    const rows = await run(db, await session(allow), 'SELECT * FROM customers ORDER BY id LIMIT 1')
    expect(rows).toEqual([{ id: 1, name: 'Alice' }])
  })

  it('grants visibility in policy_required mode and hides tables no allow matches', async () => {
    const allow = policy('column_allow', { target: { ...customers, columns: ['id', 'email'] } })
    const s = await makeSession(catalog, { accessMode: 'policy_required', policies: [allow] })
    expect(await run(db, s, 'SELECT * FROM customers ORDER BY id LIMIT 1')).toEqual([
      { id: 1, email: 'alice@acme.test' },
    ])
    expect((await runError(db, s, 'SELECT * FROM orders')).code).toBe('42P01')
  })

  it('never lets a row filter or mask grant visibility in policy_required mode (docs/policies.md#evaluation-rules-with-examples)', async () => {
    const s = await makeSession(catalog, {
      accessMode: 'policy_required',
      policies: [tenantFilter, maskEmail],
    })
    expect((await runError(db, s, 'SELECT * FROM customers')).code).toBe('42P01')
  })
})

describe('zero-column scans work under every policy combination (rule 9)', () => {
  const allowId = policy('column_allow', { target: { ...customers, columns: ['id'] } })
  const denyAll = policy('column_deny', { target: { ...customers, columns: ['*'] } })
  const combos: [string, EffectivePolicy[]][] = [
    ['no policy', []],
    ['column_allow only', [allowId]],
    ['column_deny', [denySsn]],
    ['column_deny of every column', [denyAll]],
    ['column_mask', [maskEmail]],
    ['row filter, mask and deny', [tenantFilter, maskEmail, denySsn]],
  ]
  for (const [name, policies] of combos) {
    it(`counts rows with ${name}`, async () => {
      const s = await session(...policies)
      const expected = policies.includes(tenantFilter) ? 2 : 4
      expect(await run(db, s, 'SELECT count(*)::int AS n FROM customers')).toEqual([
        { n: expected },
      ])
      const joined = await run(
        db,
        s,
        'SELECT count(*)::int AS n FROM customers c JOIN products p ON p.id = 1',
      )
      expect(joined).toEqual([{ n: expected }])
      expect(await run(db, s, 'SELECT 1 AS one FROM customers LIMIT 1')).toEqual([{ one: 1 }])
    })
  }
})
