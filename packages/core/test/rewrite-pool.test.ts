import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { isPalisadeError } from '../src/errors.js'
import { RewritePool } from '../src/isolation/rewrite-pool.js'
import { rewrite } from '../src/rewrite.js'
import type { RewriteResult } from '../src/rewrite.types.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog
let session: CompiledSession
const pools: RewritePool[] = []

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
  session = await makeSession(catalog, {
    policies: [
      policy('row_filter', {
        target: { schemas: ['public'], tables: ['orders'] },
        filterExpression: 'tenant_id = {user.tenant}',
      }),
      policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } }),
    ],
  })
})
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()))
  await db.close()
})

function pool(limits: ConstructorParameters<typeof RewritePool>[0] = {}): RewritePool {
  const p = new RewritePool({ offloadBytes: 1000, workers: 1, ...limits })
  pools.push(p)
  return p
}

/** A statement of about `n` conjuncts: long enough to go to a worker. */
function longQuery(n: number, table = 'orders'): string {
  const conjuncts = Array.from({ length: n }, (_, i) => `id > ${-i}`).join(' AND ')
  return `SELECT id FROM ${table} WHERE ${conjuncts} ORDER BY id`
}

async function failure(run: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await run()
  } catch (error) {
    if (!isPalisadeError(error)) throw error
    return { code: error.code, message: error.message }
  }
  throw new Error('expected a failure')
}

describe('rewrite pool', () => {
  it('rewrites short statements at once and long ones in a worker, identically', async () => {
    const p = pool()
    const short = p.rewrite('SELECT id FROM orders', session)
    expect(short).not.toBeInstanceOf(Promise)
    expect((short as RewriteResult).statements[0]?.sql).toBe(
      rewrite('SELECT id FROM orders', session).statements[0]?.sql,
    )
    const sql = longQuery(300)
    const pending = p.rewrite(sql, session)
    expect(pending).toBeInstanceOf(Promise)
    const offloaded = await pending
    const fresh = await makeSession(catalog, { policies: [] })
    expect(offloaded.statements[0]?.sql).toBe(rewrite(sql, session).statements[0]?.sql)
    expect(offloaded.statements[0]?.sql).not.toBe(rewrite(sql, fresh).statements[0]?.sql)
    // The filter really applies: tenant 1's rows only.
    const { rows } = await db.query<{ id: number }>(offloaded.statements[0]?.sql ?? '')
    const direct = await db.query<{ id: number }>(
      'SELECT id FROM orders WHERE tenant_id = 1 ORDER BY id',
    )
    expect(rows).toEqual(direct.rows)
    // A second time it is a cache hit on the calling thread.
    expect(p.rewrite(sql, session)).not.toBeInstanceOf(Promise)
  })

  it('rewrites catalog statements in a worker however short (a wide catalog makes them costly)', async () => {
    const p = pool()
    const sql =
      "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname IN ('orders', 'secrets')"
    const pending = p.rewrite(sql, session)
    expect(pending).toBeInstanceOf(Promise)
    const offloaded = await pending
    expect(offloaded.statements.at(-1)?.sql).toBe(rewrite(sql, session).statements.at(-1)?.sql)
    const { rows } = await db.query<{ relname: string }>(offloaded.statements.at(-1)?.sql ?? '')
    expect(new Set(rows.map((r) => r.relname))).toEqual(new Set(['orders']))
    const views = p.rewrite('SELECT table_name FROM information_schema.tables', session)
    expect(views).toBeInstanceOf(Promise)
    await views
  })

  it("answers a worker's refusal exactly as the calling thread would", async () => {
    const p = pool()
    const sql = longQuery(300, 'secrets')
    const offloaded = await failure(() => p.rewrite(sql, session))
    const local = await failure(() => rewrite(sql, session))
    expect(offloaded).toEqual(local)
    expect(offloaded.code).toBe('42P01')
  })

  it('refuses statements over the size limit before any work (54000)', async () => {
    const p = pool({ maxStatementBytes: 2000 })
    const error = await failure(() => p.rewrite(longQuery(300), session))
    expect(error.code).toBe('54000')
    expect(error.message).toMatch(/^statement of \d+ bytes exceeds the limit of 2000 bytes$/)
    // Multi-byte text is measured in UTF-8 bytes.
    const wide = `SELECT '${'é'.repeat(1000)}' AS x`
    expect((await failure(() => p.rewrite(wide, session))).code).toBe('54000')
  })

  it('stops a rewrite over its time budget (54001) and keeps serving', async () => {
    const p = pool({ rewriteTimeoutMs: 1 })
    const error = await failure(() => p.rewrite(longQuery(20_000), session))
    expect(error).toEqual({ code: '54001', message: 'statement is too complex' })
    const relaxed = pool({ rewriteTimeoutMs: 60_000 })
    const result = await relaxed.rewrite(longQuery(400), session)
    expect(result.statements[0]?.sql).toContain('tenant_id')
    // The stopped worker was replaced: the same pool still answers short and long statements.
    expect(p.rewrite('SELECT 1 AS x', session)).not.toBeInstanceOf(Promise)
  })

  it('runs many long statements from many sessions concurrently, each for its own session', async () => {
    const p = pool({ workers: 2 })
    const sessions = await Promise.all(
      [1, 2, 3].map((tenant) =>
        makeSession(catalog, {
          user: { attributes: { tenant } },
          policies: [
            policy('row_filter', {
              target: { schemas: ['public'], tables: ['orders'] },
              filterExpression: 'tenant_id = {user.tenant}',
            }),
          ],
        }),
      ),
    )
    const sql = longQuery(250)
    const results = await Promise.all(
      sessions.flatMap((s) => [p.rewrite(sql, s), p.rewrite(`${sql} `, s)]),
    )
    results.forEach((result, i) => {
      const s = sessions[Math.floor(i / 2)] as CompiledSession
      expect(result.statements[0]?.sql).toBe(rewrite(sql, s).statements[0]?.sql)
    })
  })
})
