import { expect, it } from 'vitest'
import { isPalisadeError } from '../../src/errors.js'
import { rewrite } from '../../src/rewrite.js'
import { describeOnDatabases } from '../fixtures/databases.js'
import { QUERY_CORPUS } from '../fixtures/query-corpus.js'
import { makeSession, policy } from '../fixtures/session.js'

/**
 * Every statement of the shop corpus, and variants that reach for the constrained columns,
 * under projection policies on customers.ssn and customers.email: each is refused with the
 * projection error, or runs and returns none of their values; one that names neither column
 * and no `*` returns what it returns without the policies.
 */
const projections = [
  policy('projection', {
    target: { schemas: ['public'], tables: ['customers'], columns: ['ssn', 'email'] },
  }),
]
const PROTECTED = /\d{3}-\d{2}-\d{4}|@(acme|globex)\.test/

const variants = [
  ...QUERY_CORPUS,
  ...QUERY_CORPUS.filter((sql) => /\bcustomers\b/.test(sql)).flatMap((sql) => [
    sql.replace(/^SELECT /, 'SELECT (SELECT min(email) FROM customers) AS probe, '),
    `SELECT * FROM (${sql}) AS probe`,
    `SELECT to_json(probe) FROM (${sql}) AS probe`,
    `WITH probe AS (${sql}) SELECT * FROM probe`,
  ]),
]

describeOnDatabases('projection over the query corpus', (db) => {
  it('refuses, or returns no constrained value, for every statement', async () => {
    const session = await makeSession(db().catalog, { policies: projections })
    const plain = await makeSession(db().catalog, { policies: [] })
    let ran = 0
    for (const sql of variants) {
      let statement: string
      try {
        statement = rewrite(sql, session).statements[0]?.sql ?? ''
      } catch (error) {
        if (!isPalisadeError(error)) throw error
        // Other refusals (a corpus statement the rewrite refuses anyway) are not this test's.
        if (error.code !== '42501') continue
        expect(error.message, sql).toMatch(/projection-constrained/)
        continue
      }
      let rows: unknown[]
      try {
        rows = (await db().query(statement)).rows
      } catch {
        continue
      }
      ran++
      expect(JSON.stringify(rows), sql).not.toMatch(PROTECTED)
      if (/ssn|email|\*/.test(sql)) continue
      const reference = rewrite(sql, plain).statements[0]?.sql ?? ''
      expect(rows, sql).toEqual((await db().query(reference)).rows)
    }
    expect(ran).toBeGreaterThan(50)
  })
})
