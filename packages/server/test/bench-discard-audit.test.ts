import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type PalisadeServer } from '../src/index.js'
import { capturedLog } from './fixtures/captured-log.js'
import { PASSWORD, seedShop } from './fixtures/seed-store.js'
import { storeSnapshot } from './fixtures/snapshots.js'

const VARIABLE = 'PALISADE_BENCH_DISCARD_QUERY_AUDIT'

/**
 * `PALISADE_BENCH_DISCARD_QUERY_AUDIT=1` (bench/pgbench, bench/pooling) drops every query-audit
 * row at the hand-off to the store and says so once at start; unset, the rows are written.
 */
describe(VARIABLE, () => {
  let server: PalisadeServer | undefined
  afterEach(async () => {
    delete process.env[VARIABLE]
    await server?.close()
    server = undefined
  })

  /** Starts a server, runs three statements as alice, returns the stored rows and the warnings. */
  async function threeStatements() {
    const { logs, logger } = capturedLog()
    server = await createServer({
      storeSnapshot: await storeSnapshot(),
      secretKey: 'discard-audit-tests-only-key-0123456',
      jwtSecret: 'discard-audit-tests-only-secret-0123',
      dataPlane: { port: 0 },
      admin: { port: 0 },
      logger,
    })
    await seedShop(server.store, { ds_type: 'pglite', config: {} })
    const alice = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'alice',
      password: PASSWORD,
      database: 'shop',
    })
    await alice.connect()
    await alice.query('SELECT 1 AS one')
    await alice.query('SELECT 2 AS two')
    await alice.query({ text: 'SELECT $1::int AS three', values: [3] })
    await alice.end()
    // Rows are queued after the answer reached the client: let them be queued, then write them.
    await new Promise((resolve) => setTimeout(resolve, 20))
    await server.store.audit.queries.flush()
    const { total } = await server.store.audit.queries.list({ page: 1, page_size: 10 })
    const warnings = logs.filter((line) => line['msg'] === 'query audit discarded: benchmark mode')
    return { total, warnings }
  }

  it('unset: every statement is audited and nothing is said', async () => {
    const { total, warnings } = await threeStatements()
    expect(total).toBe(3)
    expect(warnings).toHaveLength(0)
  })

  it('set to 1: no row is written, and one warning says so at start', async () => {
    process.env[VARIABLE] = '1'
    const { total, warnings } = await threeStatements()
    expect(total).toBe(0)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.['level']).toBe(40)
  })
})
