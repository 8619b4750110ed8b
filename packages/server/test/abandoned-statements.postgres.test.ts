/**
 * A client that leaves does not leave its statement running: when its socket ends while a
 * statement of its runs upstream, Palisade cancels it at once, in both pool modes and both
 * protocols, and the upstream session is clean (or replaced) for the next client. The same on
 * shutdown, once the drain period is over. PostgreSQL tier only: PGlite runs a statement on the
 * proxy's thread, where nothing interrupts it.
 */
import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { terminateBackend } from '../src/upstream/terminate-backend.js'
import { type Harness, postgresHarness } from './fixtures/harness.js'
import { WireClient } from './fixtures/wire-client.js'

const url = process.env['PALISADE_TEST_PG_URL']

let tags = 0
/** Long statements, each with a tag that finds it in pg_stat_activity (rewritten or not). */
const LONG = {
  scan: (tag: string) => `SELECT count(*) AS ${tag} FROM generate_series(1, 2000000000) AS g(x)`,
  join: (tag: string) =>
    `SELECT count(*) AS ${tag} FROM orders a, orders b, generate_series(1, 100000) AS c(x), ` +
    'generate_series(1, 100000) AS d(y)',
}

/** Upstream statements still active whose text carries `tag`. */
async function activeWith(h: Harness, tag: string): Promise<number> {
  const admin = h.upstreamAdmin
  if (!admin) throw new Error('PostgreSQL tier only')
  const { rows } = await admin.client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND strpos(query, $2) > 0",
    [admin.database, tag],
  )
  return rows[0]?.n ?? 0
}

/** Polls until `check` holds; resolves with the milliseconds it took, or throws past `limitMs`. */
async function within(limitMs: number, what: string, check: () => Promise<boolean>) {
  const started = Date.now()
  for (;;) {
    if (await check()) return Date.now() - started
    if (Date.now() - started > limitMs) throw new Error(`${what} after ${limitMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Starts `sql` on a fresh client, simple or extended, and waits until it runs upstream. */
async function startLong(h: Harness, sql: string, tag: string, extended: boolean) {
  const client = await WireClient.connect(h.plane.port, 'alice')
  client.send(
    extended
      ? Buffer.concat([
          serialize.parse({ text: sql }),
          serialize.bind({}),
          serialize.execute({}),
          serialize.sync(),
        ])
      : serialize.query(sql),
  )
  await within(5000, 'the statement never started', async () => (await activeWith(h, tag)) > 0)
  return client
}

for (const poolMode of ['session', 'transaction'] as const) {
  describe.skipIf(!url)(`a client that leaves mid-statement (${poolMode} pooling)`, () => {
    let h: Harness
    beforeAll(async () => {
      // One upstream session under transaction pooling: the next client needs the same one back.
      h = await postgresHarness({ poolMode, poolSize: poolMode === 'transaction' ? 1 : 10 })
    })
    afterAll(async () => {
      await h?.close()
    })

    for (const extended of [false, true]) {
      for (const [kind, statement] of Object.entries(LONG)) {
        const protocol = extended ? 'extended' : 'simple'
        it(`cancels a long ${kind} upstream within 1 s of the disconnect (${protocol} protocol)`, async () => {
          const tag = `abandoned_${process.pid}_${++tags}`
          const sql = statement(tag)
          const client = await startLong(h, sql, tag, extended)
          client.close()
          const took = await within(
            1000,
            'still active',
            async () => (await activeWith(h, tag)) === 0,
          )
          expect(took).toBeLessThan(1000)
          // The next client gets a clean session: the same one back, or a new one.
          const next = await h.connect('alice')
          expect((await next.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([
            { n: 2 },
          ])
          expect((await next.query('SHOW transaction_read_only')).rows).toEqual([
            { transaction_read_only: 'on' },
          ])
          await next.end()
          // Audited as the error it ended with.
          const rows = (await h.auditRows()).filter((r) => r.original_query === sql)
          expect(rows.map((r) => r.status)).toEqual(['error'])
        })
      }
    }

    it('rolls back the transaction of a client that left mid-statement inside it', async () => {
      const tag = `abandoned_tx_${process.pid}_${++tags}`
      const client = await WireClient.connect(h.plane.port, 'alice')
      client.send(serialize.query("BEGIN; SET LOCAL application_name = 'left_in_tx'"))
      await client.untilReady(1, 5000)
      const sql = LONG.scan(tag)
      client.send(serialize.query(sql))
      await within(5000, 'the statement never started', async () => (await activeWith(h, tag)) > 0)
      client.close()
      await within(1000, 'still active', async () => (await activeWith(h, tag)) === 0)
      const next = await h.connect('alice')
      expect((await next.query('SHOW application_name')).rows).toEqual([
        { application_name: 'palisade' },
      ])
      expect((await next.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      await next.end()
    })
  })

  describe.skipIf(!url)(`shutdown with a statement running (${poolMode} pooling)`, () => {
    it('cancels it upstream once the drain period is over', async () => {
      const h = await postgresHarness({ poolMode, plane: { shutdownGraceMs: 300 } })
      try {
        const tag = `shutdown_${process.pid}_${++tags}`
        const client = await startLong(h, LONG.scan(tag), tag, false)
        const started = Date.now()
        await h.plane.close()
        // The drain period, then the cancel: well within a second of it.
        await within(1000, 'still active', async () => (await activeWith(h, tag)) === 0)
        expect(Date.now() - started).toBeGreaterThanOrEqual(300)
        client.close()
      } finally {
        await h.close()
      }
    })
  })
}

describe.skipIf(!url)('terminateBackend', () => {
  let h: Harness
  beforeAll(async () => {
    h = await postgresHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  it('ends an upstream backend whose statement runs on, from a connection of its own', async () => {
    const admin = h.upstreamAdmin
    if (!admin || !url) throw new Error('PostgreSQL tier only')
    const target = new URL(url)
    const config = {
      kind: 'postgres' as const,
      datasourceName: 'shop',
      host: target.hostname,
      port: Number(target.port || 5432),
      database: admin.database,
      user: decodeURIComponent(target.username || 'postgres'),
      password: target.password ? decodeURIComponent(target.password) : null,
      sslmode: 'disable' as const,
      statementTimeoutMs: 0,
      poolSize: 1,
    }
    const tag = `terminated_${process.pid}_${++tags}`
    const victim = await WireClient.connect(h.plane.port, 'alice')
    victim.send(serialize.query(LONG.scan(tag)))
    await within(5000, 'the statement never started', async () => (await activeWith(h, tag)) > 0)
    const { rows } = await admin.client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND strpos(query, $2) > 0",
      [admin.database, tag],
    )
    expect(await terminateBackend(config, rows[0]?.pid ?? 0)).toBe(true)
    await within(1000, 'still active', async () => (await activeWith(h, tag)) === 0)
    victim.close()
  })
})
