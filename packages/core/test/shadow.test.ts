import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { rewrite } from '../src/rewrite.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog
beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const orders = { schemas: ['public'], tables: ['orders'] }
const shadowFilter = policy('row_filter', {
  target: orders,
  filterExpression: 'tenant_id = {user.tenant}',
  enforcement: 'shadow',
})
const shadowDeny = policy('table_deny', {
  target: { schemas: ['public'], tables: ['secrets'] },
  enforcement: 'shadow',
})
const enforcedMask = policy('column_mask', {
  target: { ...orders, columns: ['note'] },
  maskExpression: "'***'",
})

describe('shadow policies in the rewriter', () => {
  it('never applies a shadow policy, and reports it for the statements it targets', async () => {
    const session = await makeSession(catalog, {
      policies: [shadowFilter, shadowDeny, enforcedMask],
    })
    const [statement] = rewrite('SELECT id, note FROM orders ORDER BY id', session).statements
    expect(statement?.sql).not.toMatch(/WHERE/)
    expect(statement?.policiesApplied.map((p) => p.policy_id)).toEqual([enforcedMask.id])
    expect(statement?.shadow).toEqual({
      policies: [
        { policy_id: shadowFilter.id, version: 1, name: shadowFilter.name, decision: null },
      ],
      wouldDeny: false,
      error: null,
    })
    const rows = await run(db, session, 'SELECT count(*)::int AS n FROM orders')
    expect(rows).toEqual([{ n: 6 }])
  })

  it('says when enforcing the shadow policies would refuse the statement', async () => {
    const session = await makeSession(catalog, { policies: [shadowDeny] })
    const [statement] = rewrite('SELECT value FROM secrets', session).statements
    expect(statement?.shadow?.wouldDeny).toBe(true)
    expect(statement?.shadow?.error).toMatch(/secrets/)
    expect(statement?.shadow?.policies.map((p) => p.name)).toEqual([shadowDeny.name])
    expect(await run(db, session, 'SELECT value FROM secrets')).toEqual([{ value: 'launch codes' }])
  })

  it('adds nothing to sessions without shadow policies, and answers a repeat from the cache', async () => {
    const plain = await makeSession(catalog, { policies: [enforcedMask] })
    expect(plain.shadow).toBeUndefined()
    expect(rewrite('SELECT id FROM orders', plain).statements[0]?.shadow).toBeUndefined()
    const shadowed = await makeSession(catalog, { policies: [shadowFilter] })
    const first = rewrite('SELECT id FROM orders', shadowed)
    expect(rewrite('SELECT id FROM orders', shadowed)).toBe(first)
  })
})
