import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { loadCore } from '../src/load-core.js'
import { rewrite } from '../src/rewrite.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { decisionBinding, makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  await loadCore()
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const secrets = { schemas: ['public'], tables: ['secrets'] }
const customers = { schemas: ['public'], tables: ['customers'] }

describe('decision functions gate policies (docs/decision-functions.md, 3)', () => {
  it('a session function returning fire:false keeps a denied table visible, also in information_schema', async () => {
    const keep = decisionBinding(
      "function evaluate(ctx) { return { fire: !ctx.session.user.roles.includes('auditor') } }",
    )
    const deny = policy('table_deny', { target: secrets, decision: keep })
    const auditor = await makeSession(catalog, { policies: [deny], user: { roles: ['auditor'] } })
    expect(await run(db, auditor, 'SELECT value FROM secrets')).toEqual([{ value: 'launch codes' }])
    const tables = await run<{ table_name: string }>(
      db,
      auditor,
      'SELECT table_name FROM information_schema.tables',
    )
    expect(tables.map((t) => t.table_name)).toContain('secrets')
    const analyst = await makeSession(catalog, { policies: [deny], user: { roles: ['analyst'] } })
    expect((await runError(db, analyst, 'SELECT value FROM secrets')).code).toBe('42P01')
  })

  it('records the decision result in policies_applied', async () => {
    const gate = decisionBinding('function evaluate() { return { fire: false } }')
    const filter = policy('row_filter', {
      target: customers,
      filterExpression: 'tenant_id = 1',
      decision: gate,
    })
    const session = await makeSession(catalog, { policies: [filter] })
    const [statement] = rewrite('SELECT id FROM customers', session).statements
    // The shape of the query audit's decision record (admin-api.md, policies_applied).
    expect(statement?.policiesApplied).toEqual([
      {
        policy_id: filter.id,
        version: filter.version,
        name: filter.name,
        decision: {
          result: { fire: false, fuel_consumed: expect.any(Number), time_us: expect.any(Number) },
          logs: [],
          error: null,
        },
      },
    ])
    expect(await run(db, session, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 4 }])
  })

  it('applies on_error: deny fires the policy, skip skips it', async () => {
    const throwing = 'function evaluate() { throw new Error("boom") }'
    const denyOnError = policy('row_filter', {
      target: customers,
      filterExpression: 'tenant_id = 1',
      decision: decisionBinding(throwing, { onError: 'deny' }),
    })
    const skipOnError = policy('row_filter', {
      target: customers,
      filterExpression: 'tenant_id = 1',
      decision: decisionBinding(throwing, { onError: 'skip' }),
    })
    const denied = await makeSession(catalog, { policies: [denyOnError] })
    expect(await run(db, denied, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 2 }])
    const skipped = await makeSession(catalog, { policies: [skipOnError] })
    expect(await run(db, skipped, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 4 }])
  })

  it('fires unconditionally when the function is disabled or its artifact is missing', async () => {
    const never = 'function evaluate() { return { fire: false } }'
    const disabled = policy('row_filter', {
      target: customers,
      filterExpression: 'tenant_id = 1',
      decision: decisionBinding(never, { isEnabled: false }),
    })
    const missing = policy('row_filter', {
      target: customers,
      filterExpression: 'tenant_id = 1',
      decision: { ...decisionBinding(never), artifact: null },
    })
    for (const p of [disabled, missing]) {
      const session = await makeSession(catalog, { policies: [p] })
      expect(await run(db, session, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 2 }])
    }
  })

  it('evaluates a query function per query with the query facts, for enforcement only', async () => {
    const onlyAggregates = decisionBinding(
      'function evaluate(ctx) { return { fire: !ctx.query.has_aggregation } }',
      {
        evaluateContext: 'query',
      },
    )
    const filter = policy('row_filter', {
      target: customers,
      filterExpression: 'tenant_id = 1',
      decision: onlyAggregates,
    })
    const session = await makeSession(catalog, { policies: [filter] })
    expect(await run(db, session, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 4 }])
    expect((await run(db, session, 'SELECT id FROM customers')).length).toBe(2)
  })

  it('never lets a query function change visibility: a query-time table_deny still lists the table', async () => {
    const byTable = decisionBinding(
      "function evaluate(ctx) { return { fire: ctx.query.tables.some((t) => t.table === 'secrets') } }",
      {
        evaluateContext: 'query',
      },
    )
    const deny = policy('table_deny', { target: secrets, decision: byTable })
    const session = await makeSession(catalog, { policies: [deny] })
    const tables = await run<{ table_name: string }>(
      db,
      session,
      'SELECT table_name FROM information_schema.tables',
    )
    expect(tables.map((t) => t.table_name)).toContain('secrets')
    expect((await runError(db, session, 'SELECT * FROM secrets')).code).toBe('42P01')
  })

  it('sees the user attributes with defaults and the datasource in ctx.session', async () => {
    const source = `function evaluate(ctx, config) {
      const u = ctx.session.user
      return { fire: !(u.username === 'alice' && u.tenant === 1 && u.region === 'north' && u.label === null
        && ctx.session.datasource.name === 'shop' && ctx.session.datasource.access_mode === 'open'
        && typeof ctx.session.time.hour === 'number' && config.expected === 42 && u.is_admin === undefined) }
    }`
    const filter = policy('row_filter', {
      target: customers,
      filterExpression: 'false',
      decision: decisionBinding(source, { config: { expected: 42 } }),
    })
    const session = await makeSession(catalog, { policies: [filter] })
    expect(await run(db, session, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 4 }])
  })
})
