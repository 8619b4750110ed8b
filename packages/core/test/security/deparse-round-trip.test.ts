import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rewrite } from '../../src/rewrite.js'
import type { CompiledSession } from '../../src/session/compiled-session.js'
import { createShopDb, readCatalog } from '../fixtures/pglite.js'
import { QUERY_CORPUS } from '../fixtures/query-corpus.js'
import { makeSession } from '../fixtures/session.js'

let db: PGlite
let session: CompiledSession

beforeAll(async () => {
  db = await createShopDb()
  session = await makeSession(await readCatalog(db))
})
afterAll(() => db.close())

/** Rows as comparable text; order kept only when the query orders them. */
function canonical(rows: unknown[], ordered: boolean): string[] {
  const lines = rows.map((row) =>
    JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
  )
  return ordered ? lines : lines.sort()
}

describe('the rewrite never silently changes a result (deparser defects, dependencies.md)', () => {
  it('has a corpus of at least 100 varied queries', () => {
    expect(QUERY_CORPUS.length).toBeGreaterThanOrEqual(100)
  })

  it.each(QUERY_CORPUS.map((sql) => [sql]))(
    '%s returns the same rows after the rewrite',
    async (sql) => {
      const original = await db.query(sql)
      const [statement] = rewrite(sql, session).statements
      const rewritten = await db.query(statement?.sql ?? '')
      const ordered = /ORDER BY/i.test(sql)
      expect(canonical(rewritten.rows, ordered)).toEqual(canonical(original.rows, ordered))
      expect(rewritten.fields.map((f) => f.name)).toEqual(original.fields.map((f) => f.name))
    },
  )

  it.each([
    [
      'XMLTABLE',
      "SELECT * FROM XMLTABLE('/r' PASSING xml '<r><a>1</a></r>' COLUMNS a int PATH 'a') x",
    ],
    [
      'GROUP BY DISTINCT',
      'SELECT status, count(*) FROM orders GROUP BY DISTINCT ROLLUP (status), ROLLUP (status)',
    ],
    ['typed bit literal', "SELECT bit '101'"],
    ['JSON_TABLE', "SELECT * FROM JSON_TABLE('[1]'::jsonb, '$[*]' COLUMNS (a int PATH '$')) jt"],
  ])('rejects %s with 0A000 instead of changing its result', (_name, sql) => {
    expect(() => rewrite(sql, session)).toThrow(expect.objectContaining({ code: '0A000' }))
  })
})
