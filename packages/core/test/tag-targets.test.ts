import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { expandTagTargets } from '../src/policy/tag-targets.js'
import { validatePolicy } from '../src/policy/validate-policy.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError, sessionInput } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

/** The shop catalog with tags on some columns and tables. */
function tagged(
  base: Catalog,
  columnTags: Record<string, string[]>,
  tableTags: Record<string, string[]>,
): Catalog {
  return {
    schemas: base.schemas.map((s) => ({
      ...s,
      tables: s.tables.map((t) => ({
        ...t,
        ...(tableTags[`${s.name}.${t.name}`] ? { tags: tableTags[`${s.name}.${t.name}`] } : {}),
        columns: t.columns.map((c) => {
          const tags = columnTags[`${s.name}.${t.name}.${c.name}`]
          return tags ? { ...c, tags } : c
        }),
      })),
    })),
  }
}

beforeAll(async () => {
  db = await createShopDb()
  catalog = tagged(
    await readCatalog(db),
    {
      'public.customers.email': ['pii.email'],
      'public.customers.ssn': ['pii.ssn'],
      'hr.employees.salary': ['finance.salary'],
    },
    { 'public.secrets': ['restricted'], 'hr.employees': ['hr'] },
  )
})
afterAll(() => db.close())

describe('tag-targeted policies', () => {
  it('masks every column carrying the tag or a tag below it, and nothing else', async () => {
    const mask = policy('column_mask', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii'] },
      maskExpression: "'***'",
    })
    const session = await makeSession(catalog, { policies: [mask] })
    const rows = await run(db, session, 'SELECT name, email, ssn FROM customers WHERE id = 1')
    expect(rows).toEqual([{ name: 'Alice', email: '***', ssn: '***' }])
    // Narrowed to one tag: only that column.
    const emailOnly = policy('column_mask', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii.email'] },
      maskExpression: "'***'",
    })
    const narrow = await makeSession(catalog, { policies: [emailOnly] })
    expect(await run(db, narrow, 'SELECT email, ssn FROM customers WHERE id = 1')).toEqual([
      { email: '***', ssn: '111-11-1111' },
    ])
  })

  it('denies tagged columns and hides or filters tagged tables', async () => {
    const deny = policy('column_deny', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['finance'] },
    })
    const hide = policy('table_deny', {
      target: { schemas: ['*'], tables: ['*'], tags: ['restricted'] },
    })
    const filter = policy('row_filter', {
      target: { schemas: ['*'], tables: ['*'], tags: ['hr'] },
      filterExpression: "tenant = 'acme'",
    })
    const session = await makeSession(catalog, { policies: [deny, hide, filter] })
    expect((await runError(db, session, 'SELECT salary FROM hr.employees')).code).toBe('42501')
    expect((await runError(db, session, 'SELECT * FROM secrets')).code).toBe('42P01')
    const names = await run<{ tenant: string }>(
      db,
      session,
      'SELECT DISTINCT tenant FROM hr.employees',
    )
    expect(names.map((r) => r.tenant)).toEqual(['acme'])
    // Untagged tables are untouched.
    expect(await run(db, session, 'SELECT count(*)::int AS n FROM orders')).toEqual([{ n: 6 }])
  })

  it('covers nothing while nothing carries the tag, and name patterns narrow a tag target', async () => {
    const nothing = policy('table_deny', {
      target: { schemas: ['*'], tables: ['*'], tags: ['nobody'] },
    })
    const s1 = await makeSession(catalog, { policies: [nothing] })
    expect(await run(db, s1, 'SELECT count(*)::int AS n FROM secrets')).toEqual([{ n: 1 }])
    const inHrOnly = policy('column_mask', {
      target: { schemas: ['hr'], tables: ['*'], columns: ['*'], tags: ['pii', 'finance'] },
      maskExpression: 'NULL',
    })
    const s2 = await makeSession(catalog, { policies: [inHrOnly] })
    expect(await run(db, s2, 'SELECT salary FROM hr.employees LIMIT 1')).toEqual([{ salary: null }])
    expect(await run(db, s2, 'SELECT email FROM customers WHERE id = 1')).toEqual([
      { email: 'alice@acme.test' },
    ])
  })

  it('masks columns of any name with {column}, the masked column itself', async () => {
    const mask = policy('column_mask', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii', 'finance'] },
      maskExpression: "left({column}::text, 2) || '…'",
    })
    const session = await makeSession(catalog, { policies: [mask] })
    expect(await run(db, session, 'SELECT email, ssn FROM customers WHERE id = 1')).toEqual([
      { email: 'al…', ssn: '11…' },
    ])
    const library = policy('column_mask', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii.email'] },
      maskExpression: 'mask.email({column})',
    })
    const s2 = await makeSession(catalog, { policies: [library] })
    const [row] = await run<{ email: string }>(db, s2, 'SELECT email FROM customers WHERE id = 1')
    expect(row?.email).toMatch(/@acme\.test$/)
    expect(row?.email).not.toContain('alice')
    expect(
      validatePolicy({
        policyType: 'row_filter',
        targets: [{ schemas: ['*'], tables: ['*'] }],
        filterExpression: '{column} = 1',
      }),
    ).toMatchObject({ ok: false, error: 'invalid_expression' })
  })

  it('validates tags: a tag target needs no name patterns, a bad tag is a field error', () => {
    expect(
      validatePolicy({ policyType: 'column_deny', targets: [{ tags: ['pii.email'] } as never] }),
    ).toEqual({ ok: true })
    const bad = validatePolicy({
      policyType: 'table_deny',
      targets: [{ tags: ['PII Email'] } as never],
    })
    expect(bad).toMatchObject({
      ok: false,
      details: [{ field: 'targets[0].tags[0]', code: 'pattern' }],
    })
  })

  it('expands a projection tag target to the tagged columns, an aggregation one to the tagged tables', () => {
    const projection = policy('projection', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii.ssn'] },
    })
    const aggregation = policy('aggregation', {
      target: { schemas: ['*'], tables: ['*'], tags: ['hr'] },
      minGroupSize: 5,
      allowedAggregates: ['max'],
    })
    const input = expandTagTargets(sessionInput(catalog, { policies: [projection, aggregation] }))
    expect(input.policies[0]?.targets).toEqual([
      { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
    ])
    expect(input.policies[1]).toMatchObject({
      targets: [{ schemas: ['hr'], tables: ['employees'], columns: null }],
      minGroupSize: 5,
      allowedAggregates: ['max'],
    })
  })
})
