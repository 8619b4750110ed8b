import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rewrite } from '../src/rewrite.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy } from './fixtures/session.js'

let db: PGlite
let session: CompiledSession

beforeAll(async () => {
  db = await createShopDb()
  const filter = policy('row_filter', {
    target: { schemas: ['*'], tables: ['orders'] },
    filterExpression: 'tenant_id = 1',
  })
  session = await makeSession(await readCatalog(db), { policies: [filter] })
})
afterAll(() => db.close())

describe('bad input never crashes or hangs the rewriter', () => {
  it('answers malformed SQL with 42601 and the parser message', () => {
    expect(() => rewrite('SELEC 1', session)).toThrow(
      expect.objectContaining({ code: '42601', message: 'syntax error at or near "SELEC"' }),
    )
    expect(() => rewrite("SELECT 'unterminated", session)).toThrow(
      expect.objectContaining({ code: '42601' }),
    )
  })

  it('handles a 1 MB query with a result or an error', () => {
    const big = `SELECT id FROM orders WHERE id IN (${Array.from({ length: 150_000 }, (_, i) => i + 1_000_000).join(',')})`
    expect(big.length).toBeGreaterThan(1_000_000)
    const started = Date.now()
    const result = rewrite(big, session)
    expect(result.statements[0]?.sql).toContain('tenant_id = 1')
    expect(Date.now() - started).toBeLessThan(20_000)
  })

  it('handles a 2,000-deep nested expression with a result or an error', () => {
    const deep = `SELECT ${'('.repeat(2000)}1${')'.repeat(2000)} FROM orders`
    let outcome: string
    try {
      outcome = rewrite(deep, session).statements[0]?.sql ?? ''
    } catch (error) {
      outcome = (error as { code?: string }).code ?? 'no code'
    }
    expect(outcome.length).toBeGreaterThan(0)
    const deepBool = `SELECT 1 FROM orders WHERE ${Array.from({ length: 2000 }, () => 'NOT').join(' ')} true`
    try {
      rewrite(deepBool, session)
    } catch (error) {
      expect((error as { code?: string }).code).toMatch(/^(54001|42601|0A000)$/)
    }
  })

  it('keeps working after bad input', () => {
    expect(rewrite('SELECT 1', session).statements).toHaveLength(1)
  })
})
