import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setup, type TestContext, unique } from './helpers.js'
import { scratchPostgres } from './scratch-postgres.js'
import { runJob } from './upstream-fixtures.js'

/**
 * Seeded PII beside a control table: what a classifier must find, and must not. The `contact`
 * column holds emails under a name that says nothing; `legacy_ref` holds 16-digit numbers that
 * fail the Luhn check; `code` holds plain 9-digit numbers that are not SSNs.
 */
export const PII_SQL = `
CREATE TABLE people (
  id int PRIMARY KEY, full_name text, email text, contact text, phone text, card_number text,
  iban text, ssn text, last_ip inet, dob date, notes text);
INSERT INTO people VALUES
  (1, 'Ann Lee', 'ann@acme.test', 'ann.lee@mail.test', '+1 415-555-0101', '4111 1111 1111 1111',
   'DE89370400440532013000', '123-45-6789', '10.0.0.1', '1984-02-11', 'likes tea'),
  (2, 'Bob Roe', 'bob@acme.test', 'bob@roe.test', '(415) 555-0102', '5500-0000-0000-0004',
   'GB82WEST12345698765432', '234-56-7890', '192.168.1.20', '1990-07-30', 'n/a'),
  (3, 'Cid Poe', 'cid@globex.test', 'cid@poe.test', '+44 20 7946 0958', '340000000000009',
   'FR1420041010050500013M02606', '345-67-8901', '2001:db8::1', '1975-12-01', NULL),
  (4, 'Dee Kay', 'dee@globex.test', 'dee@kay.test', '+49 30 901820', '6011000000000004',
   'NL91ABNA0417164300', '456-78-9012', '172.16.0.5', '2001-05-05', 'vip');
CREATE TABLE products (
  id int PRIMARY KEY, sku text, name text, price numeric(10,2), legacy_ref text, code text,
  released date, description text);
INSERT INTO products VALUES
  (1, 'SKU-1001', 'Widget', 9.99, '1234567812345678', '100200300', '2024-01-01', 'A widget'),
  (2, 'SKU-1002', 'Gadget', 19.99, '1111222233334445', '200300400', '2024-02-01', 'A gadget'),
  (3, 'SKU-1003', 'Doohickey', 4.50, '9999000011112223', '300400500', '2023-03-01', 'Small'),
  (4, 'SKU-1004', 'Gizmo', 12.00, '5555666677778889', '400500600', '2022-04-01', 'Big');
`

const EXPECTED = [
  'people.card_number: pii.payment_card',
  'people.contact: pii.email',
  'people.dob: pii.date_of_birth',
  'people.email: pii.email',
  'people.iban: pii.iban',
  'people.last_ip: pii.ip_address',
  'people.phone: pii.phone',
  'people.ssn: pii.ssn',
]

const names = (proposals: { table_name: string; column_name: string; tag: string }[]) =>
  proposals.map((p) => `${p.table_name}.${p.column_name}: ${p.tag}`).sort()

/** Saves both tables through a discovery job: classification runs as part of it. */
async function saveThroughDiscovery(ctx: TestContext, dsId: string) {
  const job = await runJob(ctx, dsId, {
    action: 'save_catalog',
    schemas: [
      {
        schema_name: 'public',
        is_selected: true,
        tables: [
          { table_name: 'people', is_selected: true },
          { table_name: 'products', is_selected: true },
        ],
      },
    ],
  })
  expect(job.status).toBe('completed')
}

function classificationCases(
  label: string,
  config: () => Promise<Record<string, unknown>>,
  dsType: 'pglite' | 'postgres',
) {
  describe(`classification, over ${label}`, () => {
    let ctx: TestContext
    let dsId: string
    beforeAll(async () => {
      ctx = await setup()
      const ds = await ctx.store.datasources.create(
        { name: unique('crm'), ds_type: dsType, config: await config() },
        ctx.admin.id,
      )
      dsId = ds.id
      await saveThroughDiscovery(ctx, dsId)
    })
    afterAll(() => ctx?.close())

    it('proposes the seeded PII on discovery, with confidence, and nothing on the control table', async () => {
      const { status, body } = await ctx.json('GET', `/api/v1/datasources/${dsId}/tag-proposals`)
      expect(status).toBe(200)
      expect(names(body)).toEqual(EXPECTED)
      const contact = body.find((p: { column_name: string }) => p.column_name === 'contact')
      expect(contact).toMatchObject({ evidence: 'values', status: 'pending' })
      expect(contact.confidence).toBeGreaterThanOrEqual(0.8)
      const email = body.find((p: { column_name: string }) => p.column_name === 'email')
      expect(email.evidence).toBe('name+values')
      // The sampled values are nowhere: not in the proposals, not in the admin audit.
      const audit = await ctx.json(
        'GET',
        '/api/v1/audit/admin?resource_type=catalog_tag&action=propose',
      )
      const text = JSON.stringify(audit.body) + JSON.stringify(body)
      for (const value of [
        'ann@acme.test',
        '4111',
        'DE89',
        '123-45-6789',
        '10.0.0.1',
        '1984-02-11',
      ]) {
        expect(text).not.toContain(value)
      }
    })

    it('accepts and rejects proposals; a rejected one is not made again by the next run', async () => {
      const { body } = await ctx.json('GET', `/api/v1/datasources/${dsId}/tag-proposals`)
      const byColumn = (c: string) => body.find((p: { column_name: string }) => p.column_name === c)
      const accepted = await ctx.json(
        'POST',
        `/api/v1/datasources/${dsId}/tag-proposals/${byColumn('email').id}/accept`,
      )
      expect(accepted.body.status).toBe('accepted')
      await ctx.json(
        'POST',
        `/api/v1/datasources/${dsId}/tag-proposals/${byColumn('dob').id}/reject`,
      )
      const tags = await ctx.json('GET', `/api/v1/datasources/${dsId}/tags`)
      expect(tags.body).toEqual([
        { schema_name: 'public', table_name: 'people', column_name: 'email', tags: ['pii.email'] },
      ])
      const again = await ctx.json('POST', `/api/v1/datasources/${dsId}/classify`)
      expect(again.status).toBe(200)
      expect(again.body).toMatchObject({ proposals: [], sampled: true })
      const pending = await ctx.json('GET', `/api/v1/datasources/${dsId}/tag-proposals`)
      expect(names(pending.body)).toEqual(
        EXPECTED.filter((n) => !n.startsWith('people.email') && !n.startsWith('people.dob')),
      )
    })

    it('with sampling off, proposes from names alone and reads no values', async () => {
      const other = await ctx.store.datasources.create(
        {
          name: unique('nosample'),
          ds_type: dsType,
          config: await config(),
          classification_sampling: false,
        },
        ctx.admin.id,
      )
      await saveThroughDiscovery(ctx, other.id)
      const { body } = await ctx.json('GET', `/api/v1/datasources/${other.id}/tag-proposals`)
      // `contact` says nothing by its name: without values it is not proposed.
      expect(names(body)).toEqual(EXPECTED.filter((n) => n !== 'people.contact: pii.email'))
      expect(body.every((p: { evidence: string }) => p.evidence === 'name')).toBe(true)
      const run = await ctx.json('POST', `/api/v1/datasources/${other.id}/classify`)
      expect(run.body.sampled).toBe(false)
    })
  })
}

classificationCases('PGlite', async () => ({ init_sql: PII_SQL }), 'pglite')

const url = process.env['PALISADE_TEST_PG_URL']
if (url) {
  const drops: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const drop of drops) await drop()
  })
  classificationCases(
    'PostgreSQL',
    async () => {
      const scratch = await scratchPostgres(
        url,
        `palisade_classify_${process.pid}_${drops.length}`,
        PII_SQL,
      )
      drops.push(() => scratch.drop())
      return scratch.config
    },
    'postgres',
  )
} else describe.skip('classification over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
