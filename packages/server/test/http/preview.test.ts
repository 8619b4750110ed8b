import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_SHOP_SQL, seedDemo } from '../../src/cli/demo-shop.js'
import { MISSING_ID, PASSWORD, setup, type TestContext } from './helpers.js'
import { type ScratchPostgres, scratchPostgres } from './scratch-postgres.js'

let ctx: TestContext
let shopId: string
let aliceId: string

beforeAll(async () => {
  ctx = await setup()
  shopId = (await seedDemo(ctx.store, ctx.admin.id, PASSWORD)).datasourceId
  aliceId = ((await ctx.store.users.findByUsername('alice')) as { id: string }).id
})
afterAll(async () => {
  await ctx.close()
})

const preview = (body: Record<string, unknown>) =>
  ctx.json('POST', '/api/v1/preview', { body: { datasource_id: shopId, ...body } })

describe('POST /preview', () => {
  it("shows the rewrite, the policies applied and the user's visible catalog", async () => {
    const { status, body } = await preview({ user_id: aliceId, sql: 'SELECT * FROM customers' })
    expect(status).toBe(200)
    expect(body.allowed).toBe(true)
    expect(body.error).toBeNull()
    expect(body.executed).toBe(false)
    expect(body.user).toEqual({ id: aliceId, username: 'alice' })
    const [statement] = body.statements
    expect(statement.original_sql).toBe('SELECT * FROM customers')
    expect(statement.rewritten_sql).toContain("'acme'")
    expect(statement.rewritten_sql).not.toContain('ssn')
    expect(statement.result).toBeNull()
    const applied = statement.policies_applied.map((p: { name: string }) => p.name).sort()
    expect(applied).toEqual(['email-mask', 'ssn-deny', 'tenant-isolation'])
    const customers = body.catalog[0].tables.find((t: { name: string }) => t.name === 'customers')
    expect(body.catalog[0].name).toBe('public')
    expect(customers.row_filtered).toBe(true)
    expect(customers.columns.map((c: { name: string }) => c.name)).toEqual([
      'id',
      'tenant',
      'name',
      'email',
    ])
    expect(customers.columns.find((c: { name: string }) => c.name === 'email').masked).toBe(true)
  })

  it('runs the rewritten query read-only and returns its first rows as text', async () => {
    const { status, body } = await preview({
      username: 'alice',
      sql: 'SELECT id, email, tenant FROM customers ORDER BY id',
      execute: true,
    })
    expect(status).toBe(200)
    expect(body.executed).toBe(true)
    const { result, error } = body.statements[0]
    expect(error).toBeNull()
    expect(result.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'email', 'tenant'])
    // Only acme's rows, the email masked: exactly what alice's client would get.
    expect(result.rows).toEqual([
      ['1', 'a***@acme.example', 'acme'],
      ['2', 'a***@acme.example', 'acme'],
    ])
    expect(result.truncated).toBe(false)
  })

  it('keeps at most limit rows and says the result was cut', async () => {
    const { body } = await preview({
      user_id: aliceId,
      sql: 'SELECT id FROM orders ORDER BY id; SELECT count(*) FROM orders',
      execute: true,
      limit: 1,
    })
    const [first, second] = body.statements
    expect(first.result).toMatchObject({ rows: [['100']], row_count: 1, truncated: true })
    expect(second.result).toMatchObject({ rows: [['3']], row_count: 1, truncated: false })
  })

  it("gives a refusal as the user's client would see it, and the audit's wording beside it", async () => {
    const { body } = await preview({ user_id: aliceId, sql: 'SELECT ssn FROM customers' })
    expect(body.allowed).toBe(false)
    expect(body.statements).toEqual([])
    expect(body.error.sqlstate).toBe('42501')
    expect(body.error.message).toBe('permission denied for column(s): ssn')
    expect(body.error.message).not.toContain('ssn-deny')
    expect(typeof body.error.audit_message).toBe('string')
  })

  it('reports an upstream error per statement without running the rest of the input twice', async () => {
    const { body } = await preview({
      user_id: aliceId,
      sql: 'SELECT 1 / (id - id) FROM customers; SELECT name FROM tenants',
      execute: true,
    })
    expect(body.statements[0].error).toMatchObject({ sqlstate: '22012' })
    expect(body.statements[0].result).toBeNull()
    expect(body.statements[1].result.rows).toEqual([['Acme Corp']])
  })

  it('does not run statements other than queries', async () => {
    const { body } = await preview({
      user_id: aliceId,
      sql: "SET application_name = 'preview'",
      execute: true,
    })
    expect(body.allowed).toBe(true)
    expect(body.statements[0].result).toBeNull()
    expect(body.statements[0].not_executed).toMatch(/only queries/)
  })

  it("shows an admin the full plan of a user's EXPLAIN, which the user sees redacted", async () => {
    const { body } = await preview({
      user_id: aliceId,
      sql: 'EXPLAIN (VERBOSE) SELECT * FROM customers',
      execute: true,
    })
    const [statement] = body.statements
    expect(statement.error).toBeNull()
    expect(statement.result.columns.map((c: { name: string }) => c.name)).toEqual(['QUERY PLAN'])
    const plan = statement.result.rows.map((r: string[]) => r[0]).join('\n')
    expect(plan).toContain("'acme'")
    expect(plan).toMatch(/Seq Scan on public\.customers/)
  })

  it('says a user without access cannot connect, as the data plane would', async () => {
    const carol = await ctx.store.users.create(
      { username: 'carol', password: PASSWORD },
      ctx.admin.id,
    )
    await ctx.store.access.setUsers(shopId, { user_ids: [aliceId] }, ctx.admin.id)
    try {
      const { body } = await preview({ user_id: carol.id, sql: 'SELECT 1' })
      expect(body.allowed).toBe(false)
      expect(body.error).toMatchObject({
        sqlstate: '3D000',
        message: 'database "shop" does not exist',
      })
      expect(body.catalog).toEqual([])
    } finally {
      const bob = (await ctx.store.users.findByUsername('bob')) as { id: string }
      await ctx.store.access.setUsers(shopId, { user_ids: [aliceId, bob.id] }, ctx.admin.id)
    }
  })

  it('is recorded in the admin audit with the SQL and the previewed user', async () => {
    const sql = 'SELECT name FROM tenants -- audit probe'
    await preview({ user_id: aliceId, sql })
    const { body } = await ctx.json(
      'GET',
      `/api/v1/audit/admin?resource_id=${aliceId}&action=preview`,
    )
    const entry = body.data.find((e: { changes: string }) => JSON.parse(e.changes).sql === sql)
    expect(entry).toMatchObject({
      resource_type: 'user',
      action: 'preview',
      actor_id: ctx.admin.id,
    })
    expect(JSON.parse(entry.changes)).toEqual({
      user_id: aliceId,
      datasource_id: shopId,
      sql,
      executed: false,
    })
  })

  it('validates its body and names unknown users and datasources', async () => {
    expect((await preview({ sql: 'SELECT 1' })).status).toBe(422)
    expect((await preview({ user_id: aliceId, username: 'alice', sql: 'SELECT 1' })).status).toBe(
      422,
    )
    expect((await preview({ user_id: aliceId, sql: '   ' })).status).toBe(422)
    expect((await preview({ user_id: aliceId, sql: 'SELECT 1', limit: 0 })).status).toBe(422)
    expect((await preview({ user_id: MISSING_ID, sql: 'SELECT 1' })).status).toBe(404)
    expect((await preview({ username: 'nobody-here', sql: 'SELECT 1' })).status).toBe(404)
    const byName = await ctx.json('POST', '/api/v1/preview', {
      body: { username: 'alice', datasource_name: 'no-such-shop', sql: 'SELECT 1' },
    })
    expect(byName.status).toBe(404)
  })

  it('needs an admin token', async () => {
    const { status } = await ctx.json('POST', '/api/v1/preview', {
      token: null,
      body: { user_id: aliceId, datasource_id: shopId, sql: 'SELECT 1' },
    })
    expect(status).toBe(401)
  })
})

const url = process.env['PALISADE_TEST_PG_URL']

describe.skipIf(!url)('POST /preview on a PostgreSQL datasource', () => {
  const database = `palisade_preview_${process.pid}_${Date.now()}`
  let pgCtx: TestContext
  let scratch: ScratchPostgres | undefined
  let datasourceId: string

  beforeAll(async () => {
    scratch = await scratchPostgres(url ?? '', database, DEMO_SHOP_SQL)
    pgCtx = await setup()
    const config = scratch.config
    datasourceId = (
      await seedDemo(pgCtx.store, pgCtx.admin.id, PASSWORD, { ds_type: 'postgres', config })
    ).datasourceId
  })
  afterAll(async () => {
    await pgCtx?.close()
    await scratch?.drop()
  })

  it("returns bob's rows as PostgreSQL's text output, read-only", async () => {
    const { status, body } = await pgCtx.json('POST', '/api/v1/preview', {
      body: {
        username: 'bob',
        datasource_id: datasourceId,
        sql: 'SELECT o.id, total, placed_on, email FROM orders o JOIN customers c ON c.id = customer_id ORDER BY o.id',
        execute: true,
      },
    })
    expect(status).toBe(200)
    expect(body.statements[0].error).toBeNull()
    expect(body.statements[0].result.rows).toEqual([
      ['200', '40.00', '2026-01-05', 'g***@globex.example'],
      ['201', '7.25', '2026-01-07', 'g***@globex.example'],
    ])
  })

  it('replays audited statements under a proposed filter on PostgreSQL', async () => {
    const bob = (await pgCtx.store.users.findByUsername('bob')) as { id: string }
    pgCtx.store.audit.queries.write({
      user_id: bob.id,
      username: 'bob',
      data_source_id: datasourceId,
      datasource_name: 'shop',
      original_query: 'SELECT id, total FROM orders',
      status: 'success',
    })
    await pgCtx.store.audit.queries.flush()
    const isolation = (await pgCtx.store.policies.list({})).data.find(
      (p) => p.name === 'tenant-isolation',
    ) as { id: string; version: number }
    const { status, body } = await pgCtx.json('POST', '/api/v1/simulations', {
      body: {
        datasource_id: datasourceId,
        changes: {
          update_policies: [
            {
              id: isolation.id,
              version: isolation.version,
              filter_expression: 'tenant = {user.tenant} AND total > 10',
            },
          ],
        },
      },
    })
    expect(status).toBe(200)
    expect(body.queries[0]).toMatchObject({
      change: 'changed',
      rows_delta: -1,
      before: { rows: 2 },
      after: { rows: 1 },
    })
    expect((await pgCtx.store.policies.get(isolation.id)).version).toBe(isolation.version)
  })
})
