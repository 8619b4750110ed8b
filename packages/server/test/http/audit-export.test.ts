import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
const U1 = '0190f000-0000-7000-8000-0000000000a1'
const U2 = '0190f000-0000-7000-8000-0000000000a2'
const D1 = '0190f000-0000-7000-8000-0000000000d1'

beforeAll(async () => {
  ctx = await setup()
  for (let i = 0; i < 3; i++) {
    await ctx.store.users.create({ username: unique('u'), password: PASSWORD }, ctx.admin.id)
  }
  const queries = ['SELECT 1', 'SELECT \'a, "quoted"\nvalue\'', 'SELECT 3', 'SELECT 4', 'SELECT 5']
  for (const [i, original_query] of queries.entries()) {
    ctx.store.audit.queries.write({
      user_id: i % 2 ? U2 : U1,
      username: i % 2 ? 'two' : 'one',
      data_source_id: D1,
      datasource_name: 'shop',
      original_query,
      status: 'success',
    })
  }
  await ctx.store.audit.queries.flush()
})
afterAll(async () => {
  await ctx.close()
})

/** The body of a GET as text, with its status and content type. */
async function text(path: string) {
  const res = await ctx.call('GET', path)
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
}

describe('audit export', () => {
  it('streams the query audit as NDJSON, oldest first, with each entry linked to the one before', async () => {
    const { status, type, body } = await text('/api/v1/audit/queries/export')
    expect(status).toBe(200)
    expect(type).toContain('application/x-ndjson')
    const rows = body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(rows.map((r) => r.original_query)).toEqual([
      'SELECT 1',
      'SELECT \'a, "quoted"\nvalue\'',
      'SELECT 3',
      'SELECT 4',
      'SELECT 5',
    ])
    expect(rows[2].prev_hash).toBe(rows[1].hash)
    expect(rows.map((r) => r.chain_seq)).toEqual([1, 2, 3, 4, 5])
  })

  it('filters as the list route does', async () => {
    const { body } = await text(`/api/v1/audit/queries/export?user_id=${U2}`)
    const rows = body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(rows.map((r) => r.username)).toEqual(['two', 'two'])
    const future = await text('/api/v1/audit/queries/export?since=2999-01-01T00:00:00Z')
    expect([future.status, future.body]).toEqual([200, ''])
    expect((await text('/api/v1/audit/queries/export?status=bogus')).status).toBe(400)
    expect((await text('/api/v1/audit/queries/export?format=xml')).status).toBe(400)
  })

  it('writes CSV with a header row and RFC 4180 quoting', async () => {
    const { type, body } = await text(`/api/v1/audit/queries/export?format=csv&user_id=${U2}`)
    expect(type).toContain('text/csv')
    const [header] = body.split('\r\n')
    expect(header?.split(',')).toContain('original_query')
    expect(header?.split(',')).toContain('hash')
    expect(body).toContain('"SELECT \'a, ""quoted""\nvalue\'"')
    expect(body.endsWith('\r\n')).toBe(true)
  })

  it('exports the admin audit with the same filters as its list', async () => {
    const { body } = await text('/api/v1/audit/admin/export?resource_type=user&action=create')
    const rows = body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    // The admin of setup() and the three users.
    expect(rows).toHaveLength(4)
    expect(rows.every((r) => r.action === 'create' && typeof r.hash === 'string')).toBe(true)
  })
})

describe('GET /audit/verify', () => {
  it('finds every chain whole, then the first entry changed behind Palisade', async () => {
    const whole = await ctx.json('GET', '/api/v1/audit/verify')
    expect(whole.status).toBe(200)
    expect(whole.body.ok).toBe(true)
    const [row] = (
      (await ctx.store.db.execute(
        'SELECT id FROM query_audit_log WHERE chain_seq = 4',
      )) as unknown as { rows: { id: string }[] }
    ).rows
    await ctx.store.db.execute('ALTER TABLE query_audit_log DISABLE TRIGGER USER')
    await ctx.store.db.execute(
      `UPDATE query_audit_log SET status = 'denied' WHERE id = '${row?.id}'`,
    )
    await ctx.store.db.execute('ALTER TABLE query_audit_log ENABLE TRIGGER USER')
    const broken = await ctx.json('GET', '/api/v1/audit/verify')
    expect(broken.body.ok).toBe(false)
    expect(broken.body.first_broken).toMatchObject({
      log: 'queries',
      chain_seq: 4,
      entry_id: row?.id,
    })
  })
})
