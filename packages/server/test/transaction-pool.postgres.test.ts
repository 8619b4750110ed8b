/**
 * Transaction pooling (pool_mode = transaction) against a real PostgreSQL: many clients on a few
 * upstream sessions, each client's prepared statements, settings and cursors its own, and
 * nothing of one client left for the next on a shared session. The general suites run in this
 * mode too (each *.postgres.test.ts); these cases are the ones only sharing can break.
 */
import type pg from 'pg'
import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDataPlane, type DataPlaneBackend } from '../src/index.js'
import { failure } from './fixtures/failure.js'
import { type Harness, postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { errorCode, rawExchange } from './fixtures/raw-socket.js'
import { WireClient } from './fixtures/wire-client.js'

const url = process.env['PALISADE_TEST_PG_URL']

/** The upstream sessions Palisade holds on the scratch database. */
async function upstreamSessions(h: Harness): Promise<number> {
  const admin = h.upstreamAdmin
  if (!admin) throw new Error('PostgreSQL tier only')
  const { rows } = await admin.client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
    [admin.database],
  )
  return rows[0]?.n ?? 0
}

/** What SHOW says of a setting. */
async function show(client: pg.Client, name: string): Promise<string> {
  const { rows } = await client.query(`SHOW ${name}`)
  return Object.values(rows[0] as Record<string, string>)[0] ?? ''
}

/** Runs client statement `name` (Bind, Execute, Sync) and returns the answer's frames. */
async function executeNamed(client: WireClient, name: string) {
  client.send(
    Buffer.concat([serialize.bind({ statement: name }), serialize.execute(), serialize.sync()]),
  )
  return client.untilReady(1, 5000)
}

/** Alice's filtered orders and carol's unfiltered ones, as the seeded shop has them. */
const ALICE_ORDERS = [10, 11]
const ALL_ORDERS = [10, 11, 12, 13]

describe.skipIf(!url)('transaction pooling over PostgreSQL', () => {
  let h: Harness
  beforeAll(async () => {
    h = await transactionPoolHarness({ poolSize: 2 })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('serves 200 clients on 2 upstream sessions, each with its own policies, in both protocols', async () => {
    const clients = await Promise.all(
      Array.from({ length: 200 }, (_, i) => h.connect(i % 2 === 0 ? 'alice' : 'carol')),
    )
    const ids = async (client: pg.Client, extended: boolean) => {
      const text = 'SELECT id FROM orders WHERE amount > $1 ORDER BY id'
      const result = extended
        ? await client.query(text, [0])
        : await client.query(text.replace('$1', '0'))
      return result.rows.map((r: { id: number }) => r.id)
    }
    const answers = await Promise.all(
      clients.map(async (client, i) => {
        const seen: number[][] = []
        for (let round = 0; round < 3; round++) seen.push(await ids(client, round % 2 === 0))
        return { alice: i % 2 === 0, seen }
      }),
    )
    for (const { alice, seen } of answers) {
      for (const rows of seen) expect(rows).toEqual(alice ? ALICE_ORDERS : ALL_ORDERS)
    }
    expect(await upstreamSessions(h)).toBeLessThanOrEqual(2)
    await Promise.all(clients.map((c) => c.end()))
  })

  it("keeps a client's named statements across transactions on sessions that never saw them", async () => {
    const alice = await h.connect('alice')
    const holders = [await h.connect('carol'), await h.connect('carol')]
    const named = { name: 'by_amount', text: 'SELECT id FROM orders WHERE amount > $1 ORDER BY id' }
    expect((await alice.query({ ...named, values: [15] })).rows).toEqual([{ id: 11 }])
    // Each holder takes one upstream session in turn, so alice runs on the other one.
    for (const holder of holders) {
      await holder.query('BEGIN')
      await holder.query('SELECT 1')
      expect((await alice.query({ ...named, values: [5] })).rows).toEqual([{ id: 10 }, { id: 11 }])
      await holder.query('COMMIT')
    }
    // Another client's statement of the same name is its own.
    const carol = await h.connect('carol')
    const other = {
      name: 'by_amount',
      text: 'SELECT count(*)::int AS n FROM orders WHERE $1::int > 0',
    }
    expect((await carol.query({ ...other, values: [1] })).rows).toEqual([{ n: 4 }])
    expect((await alice.query({ ...named, values: [15] })).rows).toEqual([{ id: 11 }])
  })

  it("answers 26000 for another client's statement name and never runs it", async () => {
    const alice = await WireClient.connect(h.plane.port, 'alice')
    const carol = await WireClient.connect(h.plane.port, 'carol')
    try {
      alice.send(
        Buffer.concat([
          serialize.parse({ name: 'mine', text: 'SELECT id FROM orders ORDER BY id' }),
          serialize.sync(),
        ]),
      )
      await alice.untilReady(1, 5000)
      const frames = await executeNamed(carol, 'mine')
      expect(frames.filter((f) => f.code === 'D'.charCodeAt(0))).toHaveLength(0)
      expect(errorCode(Buffer.concat(frames.map((f) => Buffer.from(f.bytes))))).toBe('26000')
    } finally {
      alice.close()
      carol.close()
    }
  })

  it("keeps each client's settings its own on every upstream session", async () => {
    const alice = await h.connect('alice')
    await alice.query("SET application_name = 'alice-app'")
    const others = await Promise.all([h.connect('carol'), h.connect('carol')])
    for (let round = 0; round < 4; round++) {
      // Others run on whichever session alice used last, and alice on whichever they left.
      for (const other of others) {
        expect(await show(other, 'application_name')).toBe('palisade')
      }
      expect(await show(alice, 'application_name')).toBe('alice-app')
    }
    // A SET through the extended protocol (a named statement) is carried the same way.
    await alice.query({ name: 'set_app', text: "SET application_name = 'alice-extended'" })
    for (const other of others) expect(await show(other, 'application_name')).toBe('palisade')
    expect(await show(alice, 'application_name')).toBe('alice-extended')
    // RESET returns to the application name of the client's startup packet (none here).
    await alice.query('RESET application_name')
    expect(await show(alice, 'application_name')).toBe('')
  })

  it('undoes a SET that a rolled-back transaction made, as PostgreSQL does', async () => {
    const alice = await h.connect('alice')
    await alice.query('BEGIN')
    await alice.query("SET application_name = 'rolled-back'")
    await alice.query('ROLLBACK')
    const holder = await h.connect('carol')
    await holder.query('BEGIN')
    await holder.query('SELECT 1')
    expect((await alice.query('SHOW application_name')).rows).toEqual([
      { application_name: 'palisade' },
    ])
    await holder.query('COMMIT')
  })

  it('keeps a client with a WITH HOLD cursor on its upstream session, and the cursor its own', async () => {
    const alice = await h.connect('alice')
    await alice.query('DECLARE held CURSOR WITH HOLD FOR SELECT id FROM orders ORDER BY id')
    const carol = await h.connect('carol')
    expect(await failure(carol.query('FETCH 1 FROM held'))).toMatchObject({ code: '34000' })
    expect((await alice.query('FETCH 1 FROM held')).rows).toEqual([{ id: 10 }])
    // The pinned session stays alice's while others come and go on the remaining one.
    for (let i = 0; i < 3; i++) {
      const other = await h.connect('carol')
      expect((await other.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 4 }])
      await other.end()
    }
    expect((await alice.query('FETCH 1 FROM held')).rows).toEqual([{ id: 11 }])
    await alice.end()
    // Released with a reset: nobody can read the cursor afterwards.
    const later = await Promise.all([h.connect('carol'), h.connect('carol')])
    for (const client of later) {
      await client.query('BEGIN')
      expect(await failure(client.query('FETCH 1 FROM held'))).toMatchObject({ code: '34000' })
    }
    await Promise.all(later.map((c) => c.end()))
  })

  it('rolls back and cleans a session whose client left inside a transaction', async () => {
    const alice = await h.connect('alice')
    await alice.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
    await alice.query("SET application_name = 'left-behind'")
    await alice.query('DECLARE open_cursor CURSOR FOR SELECT id FROM orders')
    await alice.end()
    const next = await Promise.all([h.connect('carol'), h.connect('carol')])
    for (const client of next) {
      await client.query('BEGIN')
      expect([
        await show(client, 'application_name'),
        await show(client, 'transaction_isolation'),
      ]).toEqual(['palisade', 'read committed'])
      expect(await failure(client.query('FETCH 1 FROM open_cursor'))).toMatchObject({
        code: '34000',
      })
    }
    await Promise.all(next.map((c) => c.end()))
  })

  it('ends only the client whose session failed inside a transaction; others go on', async () => {
    const admin = h.upstreamAdmin
    if (!admin) throw new Error('PostgreSQL tier only')
    const doomed = await h.connect('alice')
    const bystander = await h.connect('carol')
    await doomed.query('BEGIN')
    await doomed.query("SET application_name = 'doomed-in-tx'")
    await admin.client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
      [admin.database, 'doomed-in-tx'],
    )
    expect(await failure(doomed.query('SELECT 1'))).toMatchObject({ code: '08006' })
    expect((await bystander.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([
      { n: 4 },
    ])
    const fresh = await h.connect('alice')
    expect((await fresh.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
  })

  it('cancels the statement of the client that asked, on the session it runs on', async () => {
    const alice = await h.connect('alice')
    const carol = await h.connect('carol')
    const key = alice as unknown as { processID: number; secretKey: number }
    const running = failure(
      alice.query('SELECT count(*) FROM generate_series(1, 2000000000) AS g(x)'),
    )
    await new Promise((r) => setTimeout(r, 300))
    await rawExchange(h.plane.port, [serialize.cancel(key.processID, key.secretKey)], 500)
    expect(await running).toMatchObject({ code: '57014' })
    expect((await carol.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 4 }])
    expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
  })

  it('follows PALISADE_POOL_MODE for a datasource that sets no pool mode', async () => {
    const before = process.env['PALISADE_POOL_MODE']
    process.env['PALISADE_POOL_MODE'] = 'transaction'
    try {
      // One upstream session: under session pooling the second client could not connect.
      const one = await postgresHarness({ poolSize: 1, plane: { acquireTimeoutMs: 300 } })
      try {
        expect(one.poolMode).toBe('transaction')
        const clients = [await one.connect('alice'), await one.connect('carol')]
        for (const client of clients) {
          expect((await client.query('SELECT count(*)::int AS n FROM orders')).rows).toHaveLength(1)
        }
      } finally {
        await one.close()
      }
      process.env['PALISADE_POOL_MODE'] = 'statement'
      await expect(createDataPlane({ backend: {} as DataPlaneBackend, port: 0 })).rejects.toThrow(
        'PALISADE_POOL_MODE must be session or transaction',
      )
    } finally {
      if (before === undefined) delete process.env['PALISADE_POOL_MODE']
      else process.env['PALISADE_POOL_MODE'] = before
    }
  })

  it('audits every statement of pooled clients once', async () => {
    const before = (await h.auditRows()).length
    const clients = await Promise.all(Array.from({ length: 20 }, () => h.connect('alice')))
    await Promise.all(
      clients.map(async (c, i) => {
        await c.query(`SELECT ${i} AS n`)
        await c.query('SELECT id FROM orders WHERE id = $1', [10])
      }),
    )
    await Promise.all(clients.map((c) => c.end()))
    expect((await h.auditRows()).length - before).toBe(40)
  })
})

describe.skipIf(!url)('transaction pooling: one upstream session, waiting clients', () => {
  let h: Harness
  beforeAll(async () => {
    h = await transactionPoolHarness({ poolSize: 1, plane: { acquireTimeoutMs: 400 } })
  })
  afterAll(async () => {
    await h?.close()
  })

  /** A query that must be served, not time out: the one upstream session was given back. */
  const served = async (client: pg.Client) =>
    (await client.query('SELECT count(*)::int AS n FROM orders')).rows

  it('gives the session back after statements that never reach the upstream', async () => {
    const alice = await h.connect('alice')
    const carol = await h.connect('carol')
    // Refused by Palisade (a write, a syntax error), and an empty query: no transaction ran.
    expect(await failure(alice.query('DELETE FROM orders'))).toMatchObject({ code: '25006' })
    expect(await failure(alice.query('SELEC 1'))).toMatchObject({ code: '42601' })
    await alice.query('')
    expect(await served(carol)).toEqual([{ n: 4 }])
    // A Parse whose Sync has not come yet holds no session while its client thinks.
    const raw = await WireClient.connect(h.plane.port, 'alice')
    try {
      raw.send(serialize.parse({ name: 'later', text: 'SELECT id FROM orders ORDER BY id' }))
      await new Promise((r) => setTimeout(r, 100))
      expect(await served(carol)).toEqual([{ n: 4 }])
      // Its statement still runs once the rest arrives, on whichever session is free.
      const frames = await executeNamed(raw, 'later')
      expect(frames.filter((f) => f.code === 'D'.charCodeAt(0))).toHaveLength(2)
    } finally {
      raw.close()
    }
    expect(await served(alice)).toEqual([{ n: 2 }])
  })

  it('fails each waiter at its own deadline, and never one that was served', async () => {
    const holder = await h.connect('carol')
    const waiters = await Promise.all([h.connect('alice'), h.connect('alice'), h.connect('alice')])
    await holder.query('BEGIN')
    await holder.query('SELECT 1')
    // Three clients start waiting 150 ms apart; each gives up 400 ms after it started.
    const started = Date.now()
    const outcomes = waiters.map(async (client, i) => {
      await new Promise((r) => setTimeout(r, i * 150))
      const asked = Date.now()
      const outcome = await failure(client.query('SELECT 1'))
      return { ...outcome, waited: Date.now() - asked }
    })
    for (const outcome of await Promise.all(outcomes)) {
      expect(outcome).toMatchObject({
        code: '53300',
        message: 'no upstream session of datasource "shop" became free within 0.4 s',
      })
      expect(outcome.waited).toBeGreaterThanOrEqual(380)
      expect(outcome.waited).toBeLessThan(1500)
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(300 + 380)
    // A Query of two statements that never got a session: each statement has its audit row.
    const late = await h.connect('alice')
    expect(
      await failure(late.query('SELECT 41 AS first_one; SELECT 42 AS second_one')),
    ).toMatchObject({ code: '53300' })
    const rows = (await h.auditRows()).filter((r) => r.original_query.includes('_one'))
    expect(rows.map((r) => [r.original_query.trim(), r.status]).sort()).toEqual([
      ['SELECT 41 AS first_one', 'error'],
      ['SELECT 42 AS second_one', 'error'],
    ])
    await holder.query('COMMIT')

    // A client served while it waits keeps its connection past its deadline.
    const patient = await h.connect('alice')
    await holder.query('BEGIN')
    await holder.query('SELECT 1')
    const answer = patient.query('SELECT count(*)::int AS n FROM orders')
    await new Promise((r) => setTimeout(r, 150))
    await holder.query('COMMIT')
    expect((await answer).rows).toEqual([{ n: 2 }])
    await new Promise((r) => setTimeout(r, 400))
    expect(await served(patient)).toEqual([{ n: 2 }])
    expect(await served(holder)).toEqual([{ n: 4 }])
  })

  it('runs nothing for clients that left while they waited, and serves the one behind them', async () => {
    const holder = await h.connect('carol')
    // (The test client checks its connection with a query: connected before the session is held.)
    const leavers = await Promise.all(
      [1, 2, 3].map(() => WireClient.connect(h.plane.port, 'alice')),
    )
    const next = await h.connect('alice')
    await holder.query('BEGIN')
    await holder.query('SELECT 1')
    // Three clients queue a statement each (two as a Query, one in the extended protocol) and
    // leave before a session is free.
    for (const [i, leaver] of leavers.entries()) {
      const text = `SELECT ${i} AS left_while_waiting, count(*) FROM orders`
      leaver.send(
        i < 2
          ? serialize.query(text)
          : Buffer.concat([
              serialize.parse({ text }),
              serialize.bind(),
              serialize.execute(),
              serialize.sync(),
            ]),
      )
    }
    await new Promise((r) => setTimeout(r, 50))
    for (const leaver of leavers) leaver.close()
    const answer = next.query('SELECT count(*)::int AS n FROM orders')
    await new Promise((r) => setTimeout(r, 50))
    await holder.query('COMMIT')
    // Served at once, well inside its own 400 ms wait: the places of the clients gone were skipped.
    expect((await answer).rows).toEqual([{ n: 2 }])
    expect(await served(holder)).toEqual([{ n: 4 }])
    expect(await upstreamSessions(h)).toBe(1)
    // Each statement has its audit row, and none ran (on a loaded machine a client's own wait may
    // end first: its row then says so instead).
    const rows = (await h.auditRows()).filter((r) =>
      r.original_query.includes('left_while_waiting'),
    )
    expect(rows).toHaveLength(3)
    for (const row of rows) {
      expect(row.status).toBe('error')
      expect(row.error_message).toMatch(/the client disconnected|became free within/)
    }
  })
})
