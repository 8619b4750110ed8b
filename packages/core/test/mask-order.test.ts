import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { EffectivePolicy } from '../src/policy/policy.types.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const target = { schemas: ['public'], tables: ['customers'], columns: ['email'] }

/** The first email the user reads, to see which mask applied. */
async function firstEmail(policies: EffectivePolicy[]) {
  const session = await makeSession(catalog, { policies })
  const [row] = await run<{ email: string }>(db, session, 'SELECT email FROM customers LIMIT 1')
  return row?.email
}

describe('masks at equal priority (docs/roles-and-access.md#policy-assignments)', () => {
  it('prefers the lower priority whatever the scope', async () => {
    const broad = policy('column_mask', {
      target,
      maskExpression: "'low'",
      priority: 1,
      scope: 'all',
    })
    const narrow = policy('column_mask', {
      target,
      maskExpression: "'high'",
      priority: 2,
      scope: 'user',
    })
    expect(await firstEmail([narrow, broad])).toBe('low')
  })

  it('decides a tie by scope, user before role before all, not by policy id', async () => {
    // Policy ids grow with creation order: the first policy has the smaller id.
    const all = policy('column_mask', {
      target,
      maskExpression: "'all'",
      scope: 'all',
      assignmentId: 'a1',
    })
    const role = policy('column_mask', {
      target,
      maskExpression: "'role'",
      scope: 'role',
      assignmentId: 'a2',
    })
    const user = policy('column_mask', {
      target,
      maskExpression: "'user'",
      scope: 'user',
      assignmentId: 'a3',
    })
    expect(await firstEmail([all, role, user])).toBe('user')
    expect(await firstEmail([all, role])).toBe('role')
  })

  it('decides a tie of scope by the smaller assignment id, not by policy id', async () => {
    const first = policy('column_mask', {
      target,
      maskExpression: "'first'",
      scope: 'role',
      assignmentId: 'b9',
    })
    const second = policy('column_mask', {
      target,
      maskExpression: "'second'",
      scope: 'role',
      assignmentId: 'b1',
    })
    expect(await firstEmail([first, second])).toBe('second')
  })
})
