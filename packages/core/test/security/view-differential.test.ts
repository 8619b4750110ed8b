import type { PGlite } from '@electric-sql/pglite'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPalisadeError } from '../../src/errors.js'
import { rewrite } from '../../src/rewrite.js'
import type { CompiledSession } from '../../src/session/compiled-session.js'
import { createShopDb, readCatalogWithViews } from '../fixtures/pglite.js'
import { makeSession, policy } from '../fixtures/session.js'

/**
 * Differential property for views: a query over views, rewritten for a tenant-1 user with a
 * row filter and a mask on the base tables, returns exactly what the same query returns
 * directly on a pre-filtered, pre-masked copy of the data with the same views. A second user
 * with a denied column and a hidden table never sees a denied or hidden value.
 */
const RUNS = Math.max(200, Math.floor(Number(process.env['PALISADE_FUZZ_RUNS'] ?? 10_000) / 5))
const SEED = Number(process.env['PALISADE_FUZZ_SEED'] ?? 20261124)

const VIEWS_SQL = `
CREATE VIEW public.v_orders AS SELECT id, tenant_id, customer_id, amount, status FROM public.orders;
CREATE VIEW public.v_paid AS SELECT id, amount, customer_id FROM public.v_orders WHERE status = 'paid';
CREATE VIEW public.v_totals AS
  SELECT tenant_id, count(*) AS n, sum(amount) AS total FROM public.orders GROUP BY tenant_id;
CREATE VIEW public.v_contacts AS SELECT id, tenant_id, name, email, region FROM public.customers;
CREATE VIEW public.v_order_contacts AS
  SELECT o.id, o.amount, c.name, c.email FROM public.orders o JOIN public.customers c ON c.id = o.customer_id;
CREATE VIEW public.v_people AS SELECT id, name, ssn FROM public.customers;
CREATE VIEW public.v_vault AS SELECT o.id, s.value FROM public.orders o, public.secrets s;
`

const MASK = "'***' || right(email, 5)"

/** What tenant 1 may see, materialized: other tenants' rows removed, emails masked. */
const PREFILTER_SQL = `
SET session_replication_role = replica;
DELETE FROM public.orders WHERE tenant_id <> 1;
DELETE FROM public.customers WHERE tenant_id <> 1;
UPDATE public.customers SET email = ${MASK};
SET session_replication_role = origin;
`

let full: PGlite
let prefiltered: PGlite
let tenant: CompiledSession
let denied: CompiledSession

beforeAll(async () => {
  ;[full, prefiltered] = await Promise.all([createShopDb(), createShopDb()])
  await full.exec(VIEWS_SQL)
  await prefiltered.exec(PREFILTER_SQL + VIEWS_SQL)
  const catalog = await readCatalogWithViews(full)
  const base = { schemas: ['public'], tables: ['orders', 'customers'] }
  tenant = await makeSession(catalog, {
    policies: [
      policy('row_filter', { target: base, filterExpression: 'tenant_id = {user.tenant}' }),
      policy('column_mask', { target: { ...base, columns: ['email'] }, maskExpression: MASK }),
    ],
  })
  denied = await makeSession(catalog, {
    policies: [
      policy('column_deny', { target: { ...base, columns: ['ssn'] } }),
      policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } }),
    ],
  })
})
afterAll(async () => {
  await Promise.all([full?.close(), prefiltered?.close()])
})

const VIEWS = {
  v_orders: ['id', 'tenant_id', 'customer_id', 'amount', 'status'],
  v_paid: ['id', 'amount', 'customer_id'],
  v_totals: ['tenant_id', 'n', 'total'],
  v_contacts: ['id', 'tenant_id', 'name', 'email', 'region'],
  v_order_contacts: ['id', 'amount', 'name', 'email'],
} as const
type ViewName = keyof typeof VIEWS

const viewArb = fc.constantFrom(...(Object.keys(VIEWS) as ViewName[]))
const constArb = fc.constantFrom("'paid'", "'open'", "'north'", "'Alice'", '1', '2', '20', 'NULL')

function predicateArb(view: ViewName, alias: string): fc.Arbitrary<string> {
  const col = fc.constantFrom(...VIEWS[view]).map((c) => `${alias}.${c}`)
  return fc.oneof(
    fc
      .tuple(col, fc.constantFrom('=', '<>', '<', '>='), constArb)
      .map(([c, op, v]) => `${c}::text ${op} ${v}::text`),
    col.map((c) => `${c} IS NOT NULL`),
    col.map((c) => `${c}::text LIKE '%a%'`),
    // Would divide by zero on a row the filter removes if a predicate ever ran below the fence.
    col.map((c) => `length(${c}::text) / (CASE WHEN ${c}::text = '20.00' THEN 0 ELSE 1 END) >= 0`),
  )
}

const queryArb: fc.Arbitrary<string> = fc
  .record({
    view: viewArb,
    join: fc.option(viewArb, { nil: undefined }),
    shape: fc.constantFrom('star', 'count', 'json', 'agg', 'distinct'),
    where: fc.boolean(),
    wrap: fc.constantFrom('none', 'cte', 'derived', 'exists'),
  })
  .chain((q) =>
    fc
      .tuple(
        predicateArb(q.view, 'a'),
        fc.constantFrom(...VIEWS[q.view]),
        q.join ? fc.constantFrom(...VIEWS[q.join]) : fc.constant('id'),
      )
      .map(([where, column, joinColumn]) => {
        const from = q.join
          ? `${q.view} a JOIN ${q.join} b ON a.${column}::text = b.${joinColumn}::text`
          : `${q.view} a`
        const list =
          q.shape === 'star'
            ? q.join
              ? 'a.*, b.*'
              : '*'
            : q.shape === 'count'
              ? 'count(*) AS n'
              : q.shape === 'json'
                ? 'row_to_json(a) AS j'
                : q.shape === 'agg'
                  ? `a.${column}::text AS k, count(*) AS n, string_agg(a.${column}::text, ',' ORDER BY a.${column}::text) AS s`
                  : `DISTINCT a.${column}::text AS k`
        let sql = `SELECT ${list} FROM ${from}`
        if (q.where) sql += ` WHERE ${where}`
        if (q.shape === 'agg') sql += ` GROUP BY a.${column}`
        if (q.wrap === 'cte') return `WITH w AS (${sql}) SELECT * FROM w`
        if (q.wrap === 'derived') return `SELECT * FROM (${sql}) d`
        if (q.wrap === 'exists')
          return `SELECT count(*) AS n FROM ${q.view} x WHERE EXISTS (SELECT 1 FROM ${from} WHERE a.${column}::text = x.${column}::text)`
        return sql
      }),
  )

/** Rows as sorted JSON lines: the comparison ignores row order (most queries have none). */
const canonical = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort()

async function outcome(db: PGlite, sql: string): Promise<{ rows?: string[]; error?: string }> {
  try {
    return { rows: canonical((await db.query(sql)).rows) }
  } catch (error) {
    return { error: (error as { code?: string }).code ?? 'error' }
  }
}

describe('differential fuzzing of views', () => {
  it(`answers like a pre-filtered copy and never shows a denied value (${RUNS} queries)`, async () => {
    let compared = 0
    await fc.assert(
      fc.asyncProperty(queryArb, async (sql) => {
        let rewritten: string
        try {
          rewritten = rewrite(sql, tenant).statements[0]?.sql ?? ''
        } catch (error) {
          if (!isPalisadeError(error)) throw error
          return
        }
        const [through, direct] = await Promise.all([
          outcome(full, rewritten),
          outcome(prefiltered, sql),
        ])
        if (through.error !== undefined || direct.error !== undefined) {
          // An error on one side only would mean the wrapper changed the query's meaning.
          expect(through.error, `${sql}\n→ ${rewritten}`).toBe(direct.error)
          return
        }
        compared++
        expect(through.rows, `${sql}\n→ ${rewritten}`).toEqual(direct.rows)
      }),
      { numRuns: RUNS, seed: SEED },
    )
    console.log(`view differential: ${RUNS} queries, ${compared} compared row for row`)
    expect(compared).toBeGreaterThan(RUNS / 2)
  }, 600_000)

  it('never returns a denied column or a hidden table through a view', async () => {
    for (const sql of [
      'SELECT * FROM v_people',
      'SELECT row_to_json(p) FROM v_people p',
      'SELECT * FROM v_vault',
      "SELECT (SELECT string_agg(value, ',') FROM v_vault) AS v",
    ]) {
      let rows: unknown[] = []
      try {
        rows = (await full.query(rewrite(sql, denied).statements[0]?.sql ?? '')).rows
      } catch (error) {
        if (!isPalisadeError(error) && (error as { code?: string }).code === undefined) throw error
      }
      expect(JSON.stringify(rows), sql).not.toMatch(/\d{3}-\d{2}-\d{4}|launch codes/)
    }
  })
})
