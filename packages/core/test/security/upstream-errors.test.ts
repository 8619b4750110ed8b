import { expect, it } from 'vitest'
import { rewrite } from '../../src/rewrite.js'
import {
  REDACTED_UPSTREAM_MESSAGE,
  scrubUpstreamError,
  type UpstreamErrorFields,
} from '../../src/upstream-error.js'
import { describeOnDatabases } from '../fixtures/databases.js'
import { makeSession, policy } from '../fixtures/session.js'

const customers = { schemas: ['public'], tables: ['customers'] }
const hideSecrets = policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } })
const denySsn = policy('column_deny', { target: { ...customers, columns: ['ssn'] } })
const filter = policy('row_filter', {
  target: customers,
  filterExpression: "region <> 'nowhere' AND tenant_id = {user.tenant}",
})
const badFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders'] },
  filterExpression: 'tenant_id = {user.label}',
})
const divideMask = policy('column_mask', {
  target: { ...customers, columns: ['name'] },
  maskExpression: '(1 / (id - id))::text',
})
const allowSome = policy('column_allow', {
  target: { schemas: ['public'], tables: ['products'], columns: ['id', 'name'] },
})
const policies = [hideSecrets, denySsn, filter, badFilter, divideMask, allowSome]

/** Runs the rewritten SQL and returns the scrubbed error it produced upstream. */
async function upstreamError(
  db: { query(sql: string): Promise<unknown> },
  sql: string,
  session: Awaited<ReturnType<typeof makeSession>>,
) {
  const [statement] = rewrite(sql, session).statements
  try {
    await db.query(statement?.sql ?? '')
  } catch (error) {
    return {
      raw: error as UpstreamErrorFields,
      scrubbed: scrubUpstreamError(error as UpstreamErrorFields, { session, originalSql: sql }),
    }
  }
  throw new Error(`expected an upstream error for ${sql}`)
}

describeOnDatabases('upstream errors never reveal what a policy hides', (db) => {
  it('drops position, internal query and context, and object fields, from every relayed error', async () => {
    const session = await makeSession(db().catalog, {
      policies,
      user: { attributes: { tenant: 1, label: 'not a number' } },
    })
    for (const sql of [
      'SELECT nme FROM customers',
      'SELECT id, ssn FROM customers',
      'SELECT name FROM customers',
      'SELECT id FROM orders',
      'SELECT 1/0 FROM customers',
      'SELECT id, price FROM products',
    ]) {
      const { scrubbed } = await upstreamError(db(), sql, session)
      expect(Object.keys(scrubbed).sort(), sql).toEqual(
        expect.arrayContaining(['code', 'message', 'severity']),
      )
      for (const key of [
        'position',
        'internalQuery',
        'internalPosition',
        'where',
        'schema',
        'table',
        'column',
      ]) {
        expect(scrubbed, sql).not.toHaveProperty(key)
      }
      const text = JSON.stringify(scrubbed)
      expect(text, sql).not.toContain('nowhere')
      expect(text, sql).not.toContain('secrets')
      expect(text, sql).not.toContain(filter.filterExpression as string)
      if (!sql.includes('ssn')) expect(text, sql).not.toContain('ssn')
    }
  })

  it('keeps the useful part of an ordinary error', async () => {
    const session = await makeSession(db().catalog, { policies })
    const missing = await upstreamError(db(), 'SELECT id, ssn FROM customers', session)
    expect(missing.scrubbed).toMatchObject({
      code: '42703',
      message: expect.stringContaining('ssn'),
    })
    const division = await upstreamError(db(), 'SELECT name FROM customers', session)
    expect(division.scrubbed).toMatchObject({ code: '22012', message: 'division by zero' })
  })

  it('redacts a message, detail or hint naming a hidden table, denied column or filter the user did not write', async () => {
    const session = await makeSession(db().catalog, { policies })
    const fields: UpstreamErrorFields = {
      code: '42501',
      message: 'permission denied for table "secrets"',
      detail: 'Perhaps you meant to reference the column "ssn".',
      hint: `filter was ${filter.filterExpression}`,
    }
    expect(scrubUpstreamError(fields, { session, originalSql: 'SELECT 1' })).toEqual({
      severity: 'ERROR',
      code: '42501',
      message: REDACTED_UPSTREAM_MESSAGE,
    })
    // A name the user typed is theirs to see back.
    expect(
      scrubUpstreamError(
        { code: '42703', message: 'column "ssn" does not exist' },
        { session, originalSql: 'SELECT ssn FROM customers' },
      ).message,
    ).toBe('column "ssn" does not exist')
  })
})
