import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { EffectivePolicy } from '../src/policy/policy.types.js'
import { FIDELITY_SETUP } from './fixtures/fidelity-corpus.js'
import { readCatalogWithViews } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

/**
 * Grouping by a primary key and whole-row references through the rewrite, with policies:
 * they keep PostgreSQL's answers over the visible data and never bring back what a policy hides.
 */
let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await PGlite.create()
  await db.exec(FIDELITY_SETUP)
  catalog = await readCatalogWithViews(db, ['public'])
}, 60_000)
afterAll(() => db.close())

/** A session in open access mode under the given policies. */
const openSession = (...policies: EffectivePolicy[]) =>
  makeSession(catalog, { accessMode: 'open', policies })

const customers = { schemas: ['public'], tables: ['customers'] }
const euOnly = policy('row_filter', { target: customers, filterExpression: "region = 'eu'" })

describe('grouping by a primary key (functional dependency)', () => {
  it('selects the other columns of the grouped rows the row filter leaves', async () => {
    const session = await openSession(euOnly)
    expect(
      await run(
        db,
        session,
        'SELECT c.id, c.name, count(o.id)::int AS n FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id',
      ),
    ).toEqual([
      { id: 1, name: 'ann', n: 2 },
      { id: 3, name: 'cy', n: 1 },
    ])
  })

  it('groups masked columns by the key and shows them masked', async () => {
    const mask = policy('column_mask', {
      target: { ...customers, columns: ['name'] },
      maskExpression: "'***'",
    })
    const session = await openSession(mask)
    const rows = await run(db, session, 'SELECT id, name FROM customers GROUP BY id ORDER BY id')
    expect(rows.map((r) => r['name'])).toEqual(['***', '***', '***', '***'])
  })

  it('keeps 42803 when the key itself is masked: a masked key no longer identifies a row', async () => {
    const mask = policy('column_mask', {
      target: { ...customers, columns: ['id'] },
      maskExpression: '0',
    })
    const session = await openSession(mask)
    const error = await runError(db, session, 'SELECT id, name FROM customers GROUP BY id')
    expect(error.code).toBe('42803')
  })

  it('does not reach a denied column through the grouping', async () => {
    const deny = policy('column_deny', { target: { ...customers, columns: ['region'] } })
    const session = await openSession(deny)
    expect(
      await run(db, session, 'SELECT * FROM customers GROUP BY id ORDER BY id LIMIT 1'),
    ).toEqual([{ id: 1, name: 'ann', joined: expect.any(Date) }])
    const error = await runError(db, session, 'SELECT id, region FROM customers GROUP BY id')
    expect(error.code).toBe('42703')
  })
})

describe('whole-row references', () => {
  it("have the table's row type when the session sees every column unmasked", async () => {
    const session = await openSession(euOnly)
    expect(
      await run(
        db,
        session,
        'SELECT pg_typeof(c)::text AS t, row_to_json(c)::text AS j FROM customers c ORDER BY c.id',
      ),
    ).toEqual([
      { t: 'customers', j: '{"id":1,"name":"ann","region":"eu","joined":"2024-01-10"}' },
      { t: 'customers', j: '{"id":3,"name":"cy","region":"eu","joined":"2025-07-19"}' },
    ])
  })

  it('leave a denied column out and show masked values, as an anonymous record', async () => {
    const session = await openSession(
      policy('column_deny', { target: { ...customers, columns: ['region'] } }),
      policy('column_mask', {
        target: { schemas: ['public'], tables: ['orders'], columns: ['amount'] },
        maskExpression: '0',
      }),
    )
    const [customer] = await run(
      db,
      session,
      'SELECT pg_typeof(c)::text AS t, row_to_json(c)::text AS j FROM customers c WHERE id = 4',
    )
    expect(customer).toEqual({ t: 'record', j: '{"id":4,"name":"dee","joined":"2026-02-28"}' })
    const [order] = await run(db, session, 'SELECT to_jsonb(o) AS j FROM orders o WHERE id = 13')
    expect(order?.['j']).toMatchObject({ id: 13, amount: 0 })
    expect(JSON.stringify(order)).not.toContain('150')
  })

  it('read a column, not the row, when a column has the alias as its name', async () => {
    const session = await openSession()
    expect(await run(db, session, 'SELECT name FROM customers name ORDER BY 1 LIMIT 1')).toEqual([
      { name: 'ann' },
    ])
  })
})

describe('system columns', () => {
  it('read through the wrapper under the row filter, and stay out of a written-out *', async () => {
    const adults = policy('row_filter', {
      target: { schemas: ['public'], tables: ['person'] },
      filterExpression: 'age >= 25',
    })
    const session = await openSession(adults)
    expect(
      await run(
        db,
        session,
        'SELECT tableoid::regclass::text AS rel, p.* FROM person p ORDER BY name',
      ),
    ).toEqual([
      { rel: 'person', name: 'p1', age: 30 },
      { rel: 'person', name: 'p2', age: 40 },
    ])
  })

  it('leave masks in place for the columns a * stands for', async () => {
    const mask = policy('column_mask', {
      target: { ...customers, columns: ['name'] },
      maskExpression: "'***'",
    })
    const session = await openSession(mask)
    const rows = await run(
      db,
      session,
      'SELECT ctid IS NOT NULL AS has_ctid, * FROM customers WHERE id = 2',
    )
    expect(rows).toEqual([
      { has_ctid: true, id: 2, name: '***', region: 'us', joined: expect.any(Date) },
    ])
  })
})
