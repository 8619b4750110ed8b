import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { loadCore } from '../src/load-core.js'
import { rewrite } from '../src/rewrite.js'
import { createShopDb, readCatalogWithViews } from './fixtures/pglite.js'
import { decisionBinding, makeSession, policy, run, runError } from './fixtures/session.js'

/**
 * Projection policies through the rest of the policy machinery: views, decision functions,
 * tag targets, shadow mode, inheritance children. The rules themselves are in
 * security/projection.test.ts.
 */
const VIEWS_SQL = `
CREATE VIEW public.v_customers AS SELECT id, name, ssn FROM public.customers;
CREATE VIEW public.v_tax AS SELECT id, upper(ssn) AS tax FROM public.customers;
CREATE VIEW public.v_holders AS SELECT id, name FROM public.customers WHERE ssn IS NOT NULL;
CREATE TABLE public.person (name text, tenant int, ssn text);
CREATE TABLE public.student (gpa float8) INHERITS (public.person);
INSERT INTO public.person VALUES ('p1', 1, '111');
INSERT INTO public.student VALUES ('s1', 1, '333', 3.5);
`

let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  await loadCore()
  db = await createShopDb()
  await db.exec(VIEWS_SQL)
  catalog = await readCatalogWithViews(db)
})
afterAll(() => db.close())

const customers = { schemas: ['public'], tables: ['customers'] }
const projectSsn = policy('projection', { target: { ...customers, columns: ['ssn'] } })
const refusal = (table: string, column: string) =>
  `column "${column}" of table "${table}" is projection-constrained: it may filter, join and group but not be output`

describe('projection policies and views', () => {
  it('a view column computed from a constrained column is constrained', async () => {
    const session = await makeSession(catalog, { policies: [projectSsn] })
    for (const sql of [
      'SELECT ssn FROM v_customers',
      'SELECT tax FROM v_tax',
      'SELECT v FROM v_customers v',
    ]) {
      expect(await runError(db, session, sql), sql).toEqual({
        code: '42501',
        message: refusal('customers', 'ssn'),
      })
    }
  })

  it('a view filters by it, and SELECT * of a view leaves it out', async () => {
    const session = await makeSession(catalog, { policies: [projectSsn] })
    expect(await run(db, session, 'SELECT id FROM v_holders ORDER BY id')).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ])
    expect(
      await run(db, session, "SELECT id FROM v_customers WHERE ssn LIKE '2%' ORDER BY id"),
    ).toEqual([{ id: 2 }])
    const [statement] = rewrite('SELECT * FROM v_customers', session).statements
    const fields = (await db.query(statement?.sql ?? '')).fields.map((f) => f.name)
    expect(fields).toEqual(['id', 'name'])
    const [tax] = rewrite('SELECT * FROM v_tax', session).statements
    expect((await db.query(tax?.sql ?? '')).fields.map((f) => f.name)).toEqual(['id'])
  })

  it('a projection policy on the view itself constrains its column', async () => {
    const onView = policy('projection', {
      target: { schemas: ['public'], tables: ['v_customers'], columns: ['name'] },
    })
    const session = await makeSession(catalog, { policies: [onView] })
    expect(await runError(db, session, 'SELECT name FROM v_customers')).toEqual({
      code: '42501',
      message: refusal('v_customers', 'name'),
    })
    expect(await run(db, session, "SELECT id FROM v_customers WHERE name = 'Bob'")).toEqual([
      { id: 2 },
    ])
    expect(await run(db, session, 'SELECT name FROM customers WHERE id = 2')).toEqual([
      { name: 'Bob' },
    ])
  })
})

describe('projection policies through the policy machinery', () => {
  it('a session decision function switches it per user', async () => {
    const gate = decisionBinding(
      "function evaluate(ctx) { return { fire: !ctx.session.user.roles.includes('auditor') } }",
    )
    const gated = policy('projection', {
      target: { ...customers, columns: ['ssn'] },
      decision: gate,
    })
    const auditor = await makeSession(catalog, { policies: [gated], user: { roles: ['auditor'] } })
    expect(await run(db, auditor, 'SELECT ssn FROM customers WHERE id = 1')).toEqual([
      { ssn: '111-11-1111' },
    ])
    const analyst = await makeSession(catalog, { policies: [gated], user: { roles: ['analyst'] } })
    const error = await runError(db, analyst, 'SELECT ssn FROM customers WHERE id = 1')
    expect(error).toEqual({ code: '42501', message: refusal('customers', 'ssn') })
    expect(error.message).not.toContain(gated.name)
    const [statement] = rewrite('SELECT id FROM customers WHERE ssn IS NULL', analyst).statements
    expect(statement?.policiesApplied.map((p) => p.policy_id)).toContain(gated.id)
  })

  it('a query decision function switches it per statement', async () => {
    const gate = decisionBinding(
      'function evaluate(ctx) { return { fire: ctx.query.columns.includes("ssn") && !ctx.query.has_where } }',
      { evaluateContext: 'query' },
    )
    const gated = policy('projection', {
      target: { ...customers, columns: ['ssn'] },
      decision: gate,
    })
    const session = await makeSession(catalog, { policies: [gated] })
    expect((await runError(db, session, 'SELECT ssn FROM customers')).code).toBe('42501')
    expect(await run(db, session, 'SELECT ssn FROM customers WHERE id = 2')).toEqual([
      { ssn: '222-22-2222' },
    ])
  })

  it('targets columns by tag', async () => {
    const tagged: Catalog = {
      schemas: catalog.schemas.map((s) => ({
        ...s,
        tables: s.tables.map((t) => ({
          ...t,
          columns: t.columns.map((c) =>
            t.name === 'customers' && c.name === 'email' ? { ...c, tags: ['pii.email'] } : c,
          ),
        })),
      })),
    }
    const byTag = policy('projection', {
      target: { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii'] },
    })
    const session = await makeSession(tagged, { policies: [byTag] })
    expect(await runError(db, session, 'SELECT email FROM customers')).toEqual({
      code: '42501',
      message: refusal('customers', 'email'),
    })
    expect(await run(db, session, 'SELECT ssn FROM customers WHERE id = 1')).toEqual([
      { ssn: '111-11-1111' },
    ])
    expect(await run(db, session, "SELECT id FROM customers WHERE email LIKE 'bob%'")).toEqual([
      { id: 2 },
    ])
  })

  it('in shadow mode it refuses nothing and reports that it would have', async () => {
    const shadow = policy('projection', {
      target: { ...customers, columns: ['ssn'] },
      enforcement: 'shadow',
    })
    const session = await makeSession(catalog, { policies: [shadow] })
    const [statement] = rewrite('SELECT ssn FROM customers WHERE id = 1', session).statements
    expect(statement?.shadow?.wouldDeny).toBe(true)
    expect(statement?.shadow?.error).toMatch(/projection-constrained/)
    expect(await run(db, session, 'SELECT ssn FROM customers WHERE id = 1')).toEqual([
      { ssn: '111-11-1111' },
    ])
  })

  it("a child's projection policy constrains a scan of its parent", async () => {
    const onChild = policy('projection', {
      target: { schemas: ['public'], tables: ['student'], columns: ['ssn'] },
    })
    const session = await makeSession(catalog, { policies: [onChild] })
    expect(await runError(db, session, 'SELECT ssn FROM person')).toEqual({
      code: '42501',
      message: refusal('person', 'ssn'),
    })
    expect(await run(db, session, 'SELECT ssn FROM ONLY person')).toEqual([{ ssn: '111' }])
    expect((await runError(db, session, 'SELECT ssn FROM student')).code).toBe('42501')
    const onParent = policy('projection', {
      target: { schemas: ['public'], tables: ['person'], columns: ['ssn'] },
    })
    const both = await makeSession(catalog, { policies: [onParent] })
    expect((await runError(db, both, 'SELECT ssn FROM ONLY person')).code).toBe('42501')
    expect((await runError(db, both, 'SELECT ssn FROM student')).code).toBe('42501')
    expect(await run(db, session, "SELECT name FROM person WHERE ssn = '333'")).toEqual([
      { name: 's1' },
    ])
  })

  it('two projection policies, one on a second table, are both enforced', async () => {
    const onOrders = policy('projection', {
      target: { schemas: ['public'], tables: ['orders'], columns: ['note'] },
    })
    const session = await makeSession(catalog, { policies: [projectSsn, onOrders] })
    const sql =
      'SELECT c.id, o.id AS order_id FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.note IS NULL'
    expect(await run(db, session, sql)).toEqual([{ id: 3, order_id: 3 }])
    expect((await runError(db, session, 'SELECT o.note FROM orders o')).message).toBe(
      refusal('orders', 'note'),
    )
  })
})
