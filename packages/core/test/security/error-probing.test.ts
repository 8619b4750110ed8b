import { expect, it } from 'vitest'
import { rewrite } from '../../src/rewrite.js'
import { describeOnDatabases } from '../fixtures/databases.js'
import { explainPlan } from '../fixtures/explain.js'
import { makeSession, policy, run } from '../fixtures/session.js'

const tenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders', 'customers'] },
  filterExpression: 'tenant_id = {user.tenant}',
})
/**
 * The same rows, written as one costlier qual: PostgreSQL orders quals by cost, so without a
 * fence it evaluates the cheap probe first. This is what makes the probes below fail when the
 * fence is missing.
 */
const costlyTenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders'] },
  filterExpression: '(tenant_id = {user.tenant}) = (length(status) > 0)',
})

/**
 * Each probe divides by zero only on another tenant's rows. Without the fence PostgreSQL may
 * evaluate the user's predicate before the row filter and the error would reveal those rows.
 */
const probes = [
  ['WHERE', 'SELECT id FROM orders WHERE 1/(tenant_id - 2) IS NOT NULL'],
  ['WHERE on an aliased scan', 'SELECT o.id FROM orders o WHERE 1/(o.tenant_id - 2) IS NOT NULL'],
  [
    'JOIN ON',
    'SELECT o.id FROM orders o JOIN customers c ON 1/(o.tenant_id - 2) IS NOT NULL AND c.id = o.customer_id',
  ],
  ['LATERAL', 'SELECT l.x FROM orders o, LATERAL (SELECT 1/(o.tenant_id - 2) AS x) l'],
  ['ORDER BY', 'SELECT id FROM orders ORDER BY 1/(tenant_id - 2)'],
  ['GROUP BY', 'SELECT count(*) FROM orders GROUP BY 1/(tenant_id - 2)'],
  [
    'HAVING',
    'SELECT tenant_id FROM orders GROUP BY tenant_id HAVING 1/(tenant_id - 2) IS NOT NULL',
  ],
  ['FILTER', 'SELECT count(*) FILTER (WHERE 1/(tenant_id - 2) IS NOT NULL) FROM orders'],
  [
    'window frame',
    'SELECT sum(1/(tenant_id - 2)) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM orders',
  ],
  [
    'EXISTS',
    'SELECT 1 AS one WHERE EXISTS (SELECT 1 FROM orders WHERE 1/(tenant_id - 2) IS NOT NULL)',
  ],
  ['CTE', 'WITH x AS (SELECT * FROM orders) SELECT id FROM x WHERE 1/(tenant_id - 2) IS NOT NULL'],
  [
    'point query beside the probe',
    'SELECT id FROM orders WHERE id = 2 AND 1/(tenant_id - 2) IS NOT NULL',
  ],
] as const

describeOnDatabases('error-based probing cannot see rows a filter excludes', (db) => {
  it.each(probes)('a division-by-zero probe through %s never errors', async (_family, sql) => {
    for (const filter of [tenantFilter, costlyTenantFilter]) {
      const session = await makeSession(db().catalog, { policies: [filter] })
      await expect(run(db(), session, sql)).resolves.toBeDefined()
    }
  })

  it('the spec probe on CASE returns only the user tenant rows', async () => {
    const session = await makeSession(db().catalog, { policies: [costlyTenantFilter] })
    const sql =
      'SELECT id FROM orders WHERE 1/(CASE WHEN tenant_id <> 1 THEN 0 ELSE 1 END) = 1 ORDER BY id'
    expect(await run(db(), session, sql)).toEqual([{ id: 1 }, { id: 3 }, { id: 5 }])
  })

  it('the same probe does error on the unprotected table, so the probe itself works', async () => {
    await expect(
      db().query('SELECT id FROM public.orders WHERE 1/(tenant_id - 2) IS NOT NULL'),
    ).rejects.toThrow(/division by zero/)
  })

  it('returns only the user tenant rows for a point query on another tenant row', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    expect(await run(db(), session, 'SELECT id FROM orders WHERE id = 2')).toEqual([])
    expect(await run(db(), session, 'SELECT id FROM orders WHERE id = $1', [3])).toEqual([
      { id: 3 },
    ])
  })

  it('copies leakproof point predicates inside the fence so the primary key index serves them', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    await db().query('SET enable_seqscan = off')
    try {
      const { shown } = await explainPlan(
        db(),
        session,
        'EXPLAIN SELECT * FROM orders WHERE id = 3',
      )
      expect(shown).toMatch(/Index Scan using orders_pkey/)
    } finally {
      await db().query('RESET enable_seqscan')
    }
  })

  it('does not copy predicates on masked columns or non-leakproof expressions inside the fence', async () => {
    const mask = policy('column_mask', {
      target: { schemas: ['public'], tables: ['orders'], columns: ['note'] },
      maskExpression: "'x'",
    })
    const session = await makeSession(db().catalog, { policies: [tenantFilter, mask] })
    const [statement] = rewrite(
      "SELECT id FROM orders WHERE note = 'first' AND lower(status) = 'paid' AND id = 1",
      session,
    ).statements
    const inner = statement?.sql.slice(
      statement.sql.indexOf('FROM public.orders'),
      statement.sql.indexOf('OFFSET 0'),
    )
    expect(inner).toContain('orders.id = 1')
    expect(inner).not.toContain("'first'")
    expect(inner).not.toContain('lower')
  })
})

describeOnDatabases('what may be copied inside the fence', (db) => {
  it('copies range bounds computed from parameters and the clock, never subqueries', async () => {
    const session = await makeSession(db().catalog, { policies: [tenantFilter] })
    const inner = (sql: string) => {
      const text = rewrite(sql, session).statements[0]?.sql ?? ''
      return text.slice(text.indexOf('FROM public.orders'), text.indexOf('OFFSET 0'))
    }
    expect(inner('SELECT id FROM orders WHERE id BETWEEN $1 AND $1 + 500')).toContain('BETWEEN')
    expect(inner("SELECT id FROM orders WHERE created_at > now() - interval '1 day'")).toContain(
      'now()',
    )
    expect(inner('SELECT id FROM orders WHERE id = (SELECT max(id) FROM customers)')).not.toContain(
      'customers',
    )
    expect(inner('SELECT id FROM orders WHERE note = current_user')).not.toContain('note')
    expect(
      await run(
        db(),
        session,
        'SELECT id FROM orders WHERE id BETWEEN $1 AND $1 + 2 ORDER BY id',
        [2],
      ),
    ).toEqual([{ id: 3 }])
  })
})
