import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, setup, type TestContext, unique } from './helpers.js'

const U1 = '0190f000-0000-7000-8000-0000000000a1'
const U2 = '0190f000-0000-7000-8000-0000000000a2'
const D1 = '0190f000-0000-7000-8000-0000000000d1'
const url = process.env['PALISADE_TEST_PG_URL']
const created: string[] = []

afterAll(async () => {
  if (created.length === 0) return
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  } finally {
    await admin.end()
  }
})

/** A fresh database on the PostgreSQL of PALISADE_TEST_PG_URL, dropped after the file. */
async function freshDatabase(): Promise<string> {
  const name = `palisade_audit_export_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  created.push(name)
  const target = new URL(url as string)
  target.pathname = `/${name}`
  return target.toString()
}

auditExportCases('PGlite', async () => undefined)
if (url) auditExportCases('PostgreSQL', freshDatabase)

function auditExportCases(store: string, databaseUrl: () => Promise<string | undefined>): void {
  describe(`store on ${store}`, () => {
    let ctx: TestContext

    beforeAll(async () => {
      ctx = await setup({ databaseUrl: await databaseUrl() })
      for (let i = 0; i < 3; i++) {
        await ctx.store.users.create({ username: unique('u'), password: PASSWORD }, ctx.admin.id)
      }
      const queries = [
        'SELECT 1',
        'SELECT \'a, "quoted"\nvalue\'',
        'SELECT 3',
        'SELECT 4',
        'SELECT 5',
      ]
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
      it('finds every chain whole, then a statement text changed behind Palisade at its entry', async () => {
        const whole = await ctx.json('GET', '/api/v1/audit/verify')
        expect(whole.status).toBe(200)
        expect(whole.body.ok).toBe(true)
        const { body } = await text('/api/v1/audit/queries/export')
        const rows = body
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line))
        const third = rows.find((r) => r.original_query === 'SELECT 3')
        await ctx.store.db.execute('ALTER TABLE query_audit_texts DISABLE TRIGGER USER')
        await ctx.store.db.execute(
          `UPDATE query_audit_texts SET body = 'SELECT 33' WHERE digest = palisade_text_digest('SELECT 3')`,
        )
        await ctx.store.db.execute('ALTER TABLE query_audit_texts ENABLE TRIGGER USER')
        const broken = await ctx.json('GET', '/api/v1/audit/verify')
        expect(broken.body.first_broken).toMatchObject({
          log: 'queries',
          chain_seq: 3,
          entry_id: third.id,
        })
        expect(broken.body.first_broken.reason).toMatch(/statement text was changed/)
        await ctx.store.db.execute('ALTER TABLE query_audit_texts DISABLE TRIGGER USER')
        await ctx.store.db.execute(
          `UPDATE query_audit_texts SET body = 'SELECT 3' WHERE digest = palisade_text_digest('SELECT 3')`,
        )
        await ctx.store.db.execute('ALTER TABLE query_audit_texts ENABLE TRIGGER USER')
        expect((await ctx.json('GET', '/api/v1/audit/verify')).body.ok).toBe(true)
      })

      it('finds a batch changed behind Palisade at its first entry', async () => {
        // The batch holding entry 4 of the chain; its seal covers every entry it holds.
        const [chunk] = (
          (await ctx.store.db.execute(
            `SELECT id, chain_id, first_seq::int AS first_seq, entries
             FROM query_audit_chunks
             WHERE chain_id IS NOT NULL AND first_seq <= 4 AND first_seq + entries > 4`,
          )) as unknown as {
            rows: {
              id: string
              chain_id: string
              first_seq: number
              entries: number
            }[]
          }
        ).rows
        const exported = (await text('/api/v1/audit/queries/export')).body
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { id: string; chain_seq: number })
        const first = exported.find((e) => e.chain_seq === chunk?.first_seq)
        // The batch's entries are now said to come from someone else.
        await ctx.store.db.execute('ALTER TABLE query_audit_chunks DISABLE TRIGGER USER')
        await ctx.store.db.execute(
          `UPDATE query_audit_chunks SET p_username[1] = 'mallory' WHERE id = '${chunk?.id}'`,
        )
        await ctx.store.db.execute('ALTER TABLE query_audit_chunks ENABLE TRIGGER USER')
        const broken = await ctx.json('GET', '/api/v1/audit/verify')
        expect(broken.body.ok).toBe(false)
        const last = (chunk?.first_seq ?? 0) + (chunk?.entries ?? 0) - 1
        expect(broken.body.first_broken).toMatchObject({
          log: 'queries',
          chain_id: chunk?.chain_id,
          chain_seq: chunk?.first_seq,
          entry_id: first?.id,
        })
        expect(broken.body.first_broken.reason).toContain(
          `entries ${chunk?.first_seq} to ${last} of this chain`,
        )
      })
    })
  })
}
