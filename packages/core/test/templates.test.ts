import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import type { SessionUser } from '../src/session-context.types.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

const customers = { schemas: ['public'], tables: ['customers'] }
const filterOn = (expression: string) =>
  policy('row_filter', { target: customers, filterExpression: expression })
const ids = async (expression: string, user: Partial<SessionUser> = {}) => {
  const s = await makeSession(catalog, { policies: [filterOn(expression)], user })
  const rows = await run<{ id: number }>(db, s, 'SELECT id FROM customers ORDER BY id')
  return rows.map((r) => r.id)
}

describe('template variables (docs/policies.md#template-variables)', () => {
  it('resolves {user.<key>} from the user own attributes (rule 1)', async () => {
    expect(await ids('tenant_id = {user.tenant}', { attributes: { tenant: 2 } })).toEqual([2, 4])
  })

  it('gives built-ins precedence over custom attributes of the same name (rule 2)', async () => {
    const rows = await ids(
      "name = CASE WHEN {user.username} = 'alice' THEN 'Alice' ELSE 'Bob' END",
      {
        attributes: { username: 'bob' },
      },
    )
    expect(rows).toEqual([1])
    expect(await ids("{user.id} = '11111111-1111-4111-8111-111111111111'")).toEqual([1, 2, 3, 4])
    expect(await ids("'analyst' = ANY({user.roles})")).toEqual([1, 2, 3, 4])
  })

  it('keeps a value full of quotes and SQL as one literal (rule 3)', async () => {
    const hostile = "x' OR '1'='1"
    expect(await ids('name = {user.label}', { attributes: { label: hostile } })).toEqual([])
    expect(
      await ids('name = {user.label}', {
        attributes: { label: "Alice'; DROP TABLE customers; --" },
      }),
    ).toEqual([])
    const [count] = await run<{ n: number }>(
      db,
      await makeSession(catalog),
      'SELECT count(*)::int AS n FROM customers',
    )
    expect(count?.n).toBe(4)
  })

  it('uses a non-NULL default for a missing attribute, typed by value_type (rule 4)', async () => {
    expect(await ids('region = {user.region}', { attributes: {} })).toEqual([1, 4])
  })

  it('uses SQL NULL for a missing attribute with NULL default, so equality matches nothing (rule 5)', async () => {
    expect(await ids('tenant_id = {user.tenant}', { attributes: {} })).toEqual([])
  })

  it('expands an empty list to IN (NULL), matching nothing (rule 6)', async () => {
    expect(await ids('tenant_id IN ({user.tenants})', { attributes: { tenants: [] } })).toEqual([])
    expect(
      await ids('tenant_id::text IN ({user.tenants})', { attributes: { tenants: ['2'] } }),
    ).toEqual([2, 4])
  })

  it('fails when a key has no attribute definition, never substituting an empty string (rule 7)', async () => {
    const s = await makeSession(catalog, {
      policies: [filterOn('name <> {user.undefined_key} OR true')],
    })
    const error = await runError(db, s, 'SELECT id FROM customers')
    expect(error).toEqual({ code: 'XX000', message: 'access rules could not be applied' })
  })

  it('never uses the default when the attribute is present (rule 8)', async () => {
    expect(await ids('region = {user.region}', { attributes: { region: 'south' } })).toEqual([2, 3])
  })

  it('types boolean and integer attributes as literals', async () => {
    expect(await ids('{user.vip}', { attributes: { vip: true } })).toEqual([1, 2, 3, 4])
    expect(await ids('{user.vip}', { attributes: {} })).toEqual([])
    expect(await ids('id > {user.tenant}', { attributes: { tenant: '2' } })).toEqual([3, 4])
  })
})
