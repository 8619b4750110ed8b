import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { cutLiterals } from '../src/literal-template.js'
import { rewrite } from '../src/rewrite.js'
import type { RewrittenStatement } from '../src/rewrite.types.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog

const POLICIES = [
  policy('row_filter', {
    target: { schemas: ['public'], tables: ['orders', 'customers'] },
    filterExpression: 'tenant_id = {user.tenant}',
  }),
  policy('column_mask', {
    target: { schemas: ['public'], tables: ['customers'], columns: ['email'] },
    maskExpression: "'***'",
  }),
  policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } }),
]

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

describe('cutting literals out of a statement', () => {
  it('cuts numbers and strings in value positions, keeping everything else', () => {
    expect(
      cutLiterals("SELECT id FROM orders WHERE id = 42 AND note = 'it''s' /* 7 */ LIMIT 5"),
    ).toEqual({
      key: 'SELECT id FROM orders WHERE id = $1 AND note = $2 /* 7 */ LIMIT $3',
      literals: ['42', "'it''s'", '5'],
    })
    expect(
      cutLiterals('SELECT amount FROM orders WHERE id IN (1, 2.5, .5, 1e3)')?.literals,
    ).toEqual(['1', '2.5', '.5', '1e3'])
  })

  it('never cuts a column position, a typed string or a prefixed one', () => {
    expect(cutLiterals('SELECT id, 7 FROM orders ORDER BY 2, 1')).toEqual({
      key: 'SELECT id, $1 FROM orders ORDER BY 2, 1',
      literals: ['7'],
    })
    expect(cutLiterals('SELECT DISTINCT ON (1) id FROM orders WHERE id > 3')?.literals).toEqual([
      '3',
    ])
    expect(
      cutLiterals('SELECT count(*) FROM orders GROUP BY 1 HAVING count(*) > 2 ORDER BY 1 LIMIT 3')
        ?.literals,
    ).toEqual(['2', '3'])
    expect(
      cutLiterals("SELECT id FROM orders WHERE created_at > date '2024-01-01'"),
    ).toBeUndefined()
    expect(cutLiterals("SELECT E'\\\\' AS x")).toBeUndefined()
    expect(cutLiterals('SELECT $1::int AS x')).toBeUndefined()
    expect(cutLiterals('SELECT $$x$$ AS x')).toBeUndefined()
    expect(cutLiterals('SELECT 0x1F AS x')).toBeUndefined()
    expect(cutLiterals("SELECT 'unterminated")).toBeUndefined()
  })
})

describe('rewrite templates', () => {
  let session: CompiledSession
  beforeAll(async () => {
    session = await makeSession(catalog, { policies: POLICIES })
  })

  /** Each shape three times with other literals: the answer of a session that saw the shape
   * before equals that of a fresh session, statement text and error alike. */
  const shapes: Array<(v: [number, string]) => string> = [
    ([n]) => `SELECT id, amount FROM orders WHERE id = ${n}`,
    ([n, s]) => `SELECT id FROM orders WHERE id > ${n} AND status = '${s}' ORDER BY 1 LIMIT ${n}`,
    ([n]) => `SELECT id, ${n} AS k FROM orders ORDER BY ${(n % 2) + 1}`,
    ([n, s]) =>
      `SELECT name, email FROM customers WHERE name LIKE '${s}%' OR id IN (${n}, ${n + 1})`,
    ([n]) => `SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = ${n}`,
    ([n]) => `SELECT count(*) FROM orders GROUP BY ${(n % 2) + 1 > 1 ? 'status' : '1'}`,
    ([, s]) => `SELECT coalesce(NULL::regclass, '${s}') AS r`,
    ([, s]) => `SELECT '${s}'::regclass AS r`,
    ([n]) => `SELECT ${n}::regclass AS r`,
    ([n]) => `SELECT amount::numeric(10, ${n % 3}) FROM orders WHERE id = ${n}`,
    ([n, s]) => `SELECT id FROM orders WHERE id = ${n}; SELECT '${s}' AS s`,
    ([n]) => `SELECT * FROM secrets WHERE id = ${n}`,
    ([n]) => `SELECT CASE WHEN id = ${n} THEN 'a' ELSE 'b' END FROM orders WHERE amount > ${n}.5`,
    ([n]) => `SELECT DISTINCT ON (${(n % 2) + 1}) id, status FROM orders ORDER BY 1`,
  ]
  const values: Array<[number, string]> = [
    [1, 'orders'],
    [2, 'secrets'],
    [3, 'public.customers'],
  ]

  const outcome = (sql: string, s: CompiledSession) => {
    try {
      return rewrite(sql, s).statements.map((st) => ({
        sql: st.sql,
        originalSql: st.originalSql,
        kind: st.kind,
        policies: st.policiesApplied.map((p) => p.name),
      }))
    } catch (error) {
      const e = error as { code?: string; message: string }
      return { code: e.code, message: e.message }
    }
  }

  it('answers every shape exactly as a fresh rewrite does, whatever the literals', async () => {
    for (const shape of shapes) {
      for (const v of values) {
        const sql = shape(v)
        const fresh = await makeSession(catalog, { policies: POLICIES })
        expect(outcome(sql, session), sql).toEqual(outcome(sql, fresh))
      }
    }
  })

  it('serves a repeated shape from its template, and the rows are right', async () => {
    const s = await makeSession(catalog, { policies: POLICIES })
    rewrite('SELECT id FROM orders WHERE id = 1', s)
    const key = cutLiterals('SELECT id FROM orders WHERE id = 7')?.key as string
    expect(s.templateCache.get(key)).toBeTruthy()
    const [statement] = rewrite('SELECT id FROM orders WHERE id = 3', s).statements
    expect(statement?.originalSql).toBe('SELECT id FROM orders WHERE id = 3')
    const rows = (await db.query(statement?.sql as string)).rows
    const fresh = await makeSession(catalog, { policies: POLICIES })
    const direct = rewrite('SELECT id FROM orders WHERE id = 3', fresh).statements[0]
    expect(statement?.sql).toBe(direct?.sql)
    expect(rows).toEqual((await db.query(direct?.sql as string)).rows)
  })

  it('never templates a shape whose literals the rewrite reads (object names)', async () => {
    const s = await makeSession(catalog, { policies: POLICIES })
    rewrite("SELECT 'orders'::regclass AS r", s)
    expect(s.templateCache.get(cutLiterals("SELECT 'x'::regclass AS r")?.key as string)).toBeNull()
    // The hidden table answers as missing through the same shape.
    expect(outcome("SELECT 'secrets'::regclass AS r", s)).toMatchObject({ code: '42P01' })
  })
})

describe('literal parameters', () => {
  let session: CompiledSession
  beforeAll(async () => {
    session = await makeSession(catalog, { policies: POLICIES })
  })
  const only = (sql: string) => rewrite(sql, session).statements[0] as RewrittenStatement

  it('sends numbers as typed parameters, keeps strings in the text, and answers the same', async () => {
    const sql = "SELECT id, amount FROM orders WHERE id > 1 AND amount < 1e6 AND status <> 'x'"
    const statement = only(sql)
    expect(statement.parameters?.types).toEqual([23, 1700])
    expect(statement.parameters?.values).toEqual(['1', '1e6'])
    expect(statement.parameters?.sql).toContain("<> 'x'")
    expect(statement.parameters?.sql).not.toContain('1e6')
    // The row filter is still there: the parameters only replace the client's literals.
    expect(statement.parameters?.sql).toContain('tenant_id = ')
    const { sql: text, values } = statement.parameters as NonNullable<
      RewrittenStatement['parameters']
    >
    const viaParameters = await db.query(text, [...values])
    const viaText = await db.query(statement.sql)
    expect(viaParameters.rows).toEqual(viaText.rows)
    expect(viaParameters.rows.length).toBeGreaterThan(0)
    expect(viaParameters.fields.map((f) => f.dataTypeID)).toEqual(
      viaText.fields.map((f) => f.dataTypeID),
    )
  })

  it('keeps type modifiers, long integers and column positions in the text', () => {
    const typmod = only('SELECT amount::numeric(10, 2) FROM orders WHERE id = 5')
    expect(typmod.parameters?.values).toEqual(['5'])
    expect(typmod.parameters?.sql).toContain('numeric(10, 2)')
    // `-2147483648` is an int4 to PostgreSQL, its digits alone an int8: such numbers stay text.
    expect(only('SELECT id FROM orders WHERE id > -2147483648').parameters).toBeUndefined()
    expect(only("SELECT id FROM orders WHERE status = 'paid'").parameters).toBeUndefined()
    const positions = only('SELECT id, 7 AS k FROM orders ORDER BY 2, 1')
    expect(positions.parameters?.values).toEqual(['7'])
    expect(positions.parameters?.sql).toMatch(/ORDER BY 2, 1$/)
  })

  it('gives every statement of a shape the same upstream text', () => {
    const a = only('SELECT id FROM orders WHERE id = 11').parameters
    const b = only('SELECT id FROM orders WHERE id = 12').parameters
    expect(a?.sql).toBe(b?.sql)
    expect([a?.values, b?.values]).toEqual([['11'], ['12']])
  })
})
