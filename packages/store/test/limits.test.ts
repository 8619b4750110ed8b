import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LimitedSessionInput, Store, User } from '../src/index.js'
import { tightestLimits } from '../src/kernel/limits.js'
import { createTestStore } from './fixtures/pglite.js'
import { bootstrapAdmin, PASSWORD, unique } from './helpers.js'

describe('tightestLimits', () => {
  const cases = [
    { name: 'nothing set gives no limit', all: [null, {}], expected: {} },
    {
      name: 'the smallest number of each wins',
      all: [
        { max_rows_per_statement: 50, max_statements_per_minute: 10 },
        { max_rows_per_statement: 20, max_concurrent_statements: 3 },
      ],
      expected: {
        maxRowsPerStatement: 20,
        onRowLimit: 'error',
        maxStatementsPerMinute: 10,
        maxConcurrentStatements: 3,
      },
    },
    {
      name: 'truncate holds when every row limit says truncate',
      all: [
        { max_rows_per_statement: 5, on_row_limit: 'truncate' as const },
        { on_row_limit: 'truncate' as const },
      ],
      expected: { maxRowsPerStatement: 5, onRowLimit: 'truncate' },
    },
    {
      name: 'error is tighter than truncate, and a row limit without a mode counts as error',
      all: [
        { max_rows_per_statement: 5, on_row_limit: 'truncate' as const },
        { max_rows_per_statement: 9 },
      ],
      expected: { maxRowsPerStatement: 5, onRowLimit: 'error' },
    },
  ]
  it.each(cases)('$name', ({ all, expected }) => {
    expect(tightestLimits(all)).toEqual(expected)
  })
})

describe('limits in the store', () => {
  let store: Store
  let admin: User
  beforeAll(async () => {
    store = await createTestStore()
    admin = await bootstrapAdmin(store)
  })
  afterAll(() => store.close())

  it('puts the tightest limits of the user and its active roles in the session input', async () => {
    const user = await store.users.create(
      { username: unique('u'), password: PASSWORD, limits: { max_rows_per_statement: 100 } },
      admin.id,
    )
    const parent = await store.roles.create(
      { name: unique('p'), limits: { max_rows_per_statement: 10, on_row_limit: 'truncate' } },
      admin.id,
    )
    const child = await store.roles.create({ name: unique('c') }, admin.id)
    const off = await store.roles.create(
      { name: unique('off'), is_active: false, limits: { max_concurrent_statements: 1 } },
      admin.id,
    )
    await store.roles.addParent(child.id, { parent_role_id: parent.id }, admin.id)
    await store.roles.addMembers(child.id, { user_ids: [user.id] }, admin.id)
    await store.roles.addMembers(off.id, { user_ids: [user.id] }, admin.id)
    const ds = await store.datasources.create(
      { name: unique('ds'), ds_type: 'pglite', config: {} },
      admin.id,
    )
    await store.access.setAll(ds.id, { enabled: true }, admin.id)
    const input = (await store.buildSessionInput(user.username, ds.name)) as LimitedSessionInput
    // The user's own row limit sets no mode: error, tighter than the parent's truncate.
    expect(input.limits).toEqual({ maxRowsPerStatement: 10, onRowLimit: 'error' })
    const plain = await store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)
    const none = (await store.buildSessionInput(plain.username, ds.name)) as LimitedSessionInput
    expect(none).not.toHaveProperty('limits')
  })

  it('counts statements per minute and running statements, and gives slots back', async () => {
    const user = await store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)
    const counters = store.statementCounters
    const first = await counters.enter(user.id, { concurrent: 1, perMinute: 2 })
    expect(first).toMatchObject({ admitted: true })
    expect(await counters.enter(user.id, { concurrent: 1, perMinute: 2 })).toEqual({
      admitted: false,
      limit: 'concurrency',
    })
    if (!first.admitted || first.slotId === null) throw new Error('expected a slot')
    await counters.leave(first.slotId)
    const second = await counters.enter(user.id, { concurrent: 1, perMinute: 2 })
    expect(second).toMatchObject({ admitted: true })
    const third = await counters.enter(user.id, { perMinute: 2 })
    expect(third).toMatchObject({ admitted: false, limit: 'rate' })
    if (third.admitted || third.limit !== 'rate') throw new Error('expected a rate refusal')
    expect(third.retryMs).toBeGreaterThan(0)
    expect(third.retryMs).toBeLessThanOrEqual(60_000)
  })

  it('lets the slot of a statement nobody extends lapse', async () => {
    const user = await store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)
    const counters = store.statementCounters
    expect(await counters.enter(user.id, { concurrent: 1 })).toMatchObject({ admitted: true })
    await store.db.execute(
      sql`UPDATE statement_slots SET expires_at = now() - interval '1 second' WHERE user_id = ${user.id}`,
    )
    await counters.extend([])
    expect(await counters.enter(user.id, { concurrent: 1 })).toMatchObject({ admitted: true })
  })
})
