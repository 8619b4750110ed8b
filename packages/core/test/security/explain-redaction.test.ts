import { expect, it } from 'vitest'
import { explainRows } from '../../src/explain/explain-output.js'
import { rewrite } from '../../src/rewrite.js'
import { describeOnDatabases } from '../fixtures/databases.js'
import { explainPlan } from '../fixtures/explain.js'
import { makeSession, policy } from '../fixtures/session.js'

const tables = (...names: string[]) => ({ schemas: ['public'], tables: names })
const policies = [
  policy('row_filter', {
    target: tables('customers', 'orders'),
    filterExpression: 'tenant_id = {user.tenant}',
  }),
  policy('column_mask', {
    target: { ...tables('customers'), columns: ['email'] },
    maskExpression: "'masked-by-rule:' || left(email, 1)",
  }),
  policy('column_deny', { target: { ...tables('customers'), columns: ['ssn'] } }),
  policy('table_deny', { target: tables('secrets') }),
]
const STATEMENTS = [
  'SELECT * FROM customers',
  'SELECT id, email FROM customers WHERE id = 3',
  'SELECT email, count(*) FROM customers GROUP BY email ORDER BY email',
  'SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.amount > 5',
  'SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = $$north$$)',
  'WITH big AS (SELECT * FROM orders WHERE amount > 20) SELECT count(*) FROM big',
]
const OPTIONS = ['', '(VERBOSE) ', '(FORMAT JSON) ', '(VERBOSE, FORMAT YAML) ', '(FORMAT XML) ']
const HIDDEN = ['tenant_id = 1', 'masked-by-rule', 'ssn', 'secrets', 'Subquery Scan', 'NULL::']

describeOnDatabases('EXPLAIN shows the plan with the policies redacted', (db) => {
  it('keeps node types and estimates and shows no filter, mask, denied column or fence', async () => {
    const session = await makeSession(db().catalog, {
      policies,
      user: { attributes: { tenant: 1 } },
    })
    for (const statement of STATEMENTS) {
      for (const options of OPTIONS) {
        const sql = `EXPLAIN ${options}${statement}`
        const { shown, full } = await explainPlan(db(), session, sql)
        for (const hidden of HIDDEN) expect(shown, sql).not.toContain(hidden)
        expect(shown, sql).toMatch(/Scan/)
        expect(shown, sql).toMatch(/rows=\d+|Plan.Rows/)
        // The admin's full plan does show what was redacted.
        expect(full, sql).toMatch(/tenant_id = 1|Subquery Scan/)
      }
    }
  })

  it('marks the row policy and the mask, and keeps the user’s own conditions', async () => {
    const session = await makeSession(db().catalog, {
      policies,
      user: { attributes: { tenant: 1 } },
    })
    const point = await explainPlan(
      db(),
      session,
      'EXPLAIN SELECT name FROM customers WHERE id = 3',
    )
    expect(point.shown).toContain('(row policy)')
    expect(point.shown).toMatch(/id = 3/)
    // Without a condition of the user's, PostgreSQL drops the fence node and prints the mask
    // where the scan computes it.
    const masked = await explainPlan(db(), session, 'EXPLAIN (VERBOSE) SELECT * FROM customers')
    expect(masked.shown).toContain('(masked)')
    expect(masked.shown).toMatch(/Seq Scan on public\.customers/)
    expect(masked.full).toContain('masked-by-rule')
  })

  it('refuses a plan that would still show an injected literal', async () => {
    const session = await makeSession(db().catalog, {
      policies: [
        policy('row_filter', { target: tables('orders'), filterExpression: "status <> 'zz-rule'" }),
      ],
    })
    const [statement] = rewrite('EXPLAIN SELECT * FROM orders', session).statements
    const request = statement?.explain
    if (!request) throw new Error('expected an EXPLAIN')
    // A node the redaction does not know as the filter's: the safety net still catches it.
    const plan = [{ Plan: { 'Node Type': 'Result', 'One-Time Filter': "('zz-rule' <> 'x')" } }]
    expect(() => explainRows(JSON.stringify(plan), request)).toThrow(
      expect.objectContaining({ code: '42501' }),
    )
  })
})
