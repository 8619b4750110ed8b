import type { Limits } from '@palisade/store'
import type pg from 'pg'
import Cursor from 'pg-cursor'
import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalStatementGate } from '../src/data-plane/statement-gate.js'
import { ServerMetrics } from '../src/metrics/server-metrics.js'
import { failure } from './fixtures/failure.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { PASSWORD } from './fixtures/seed-store.js'
import { framesOf, WireClient } from './fixtures/wire-client.js'

let counter = 0

/** Row limits, rate and concurrency limits of users and roles (docs/roles-and-access.md#limits). */
export function runUserLimitCases(name: string, makeHarness: MakeHarness): void {
  describe(`limits per user or role, over ${name}`, () => {
    let h: Harness
    let now = Date.UTC(2026, 0, 1, 0, 0, 5)
    const metrics = new ServerMetrics()
    beforeAll(async () => {
      h = await makeHarness({
        plane: { statementGate: new LocalStatementGate(() => now), observer: metrics },
      })
      await h.store.access.setAll(h.shop.datasourceId, { enabled: true }, h.shop.admin.id)
    })
    afterAll(() => h?.close())

    /** A new user with `limits`, connected (each test its own user: counts are per user). */
    async function userWith(limits: Limits | null, extra: { roleLimits?: Limits } = {}) {
      const username = `limited_${++counter}_${Date.now() % 100000}`
      const user = await h.store.users.create(
        { username, password: PASSWORD, limits },
        h.shop.admin.id,
      )
      if (extra.roleLimits) {
        const role = await h.store.roles.create(
          { name: `${username}_role`, limits: extra.roleLimits },
          h.shop.admin.id,
        )
        await h.store.roles.addMembers(role.id, { user_ids: [user.id] }, h.shop.admin.id)
      }
      return { user, connect: () => h.connect(username) }
    }

    const series = (n: number) => `SELECT g AS n FROM generate_series(1, ${n}) g ORDER BY g`
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => ({ n: i + 1 }))

    it('fails a statement past its row limit with 54000 and keeps the connection', async () => {
      const { connect } = await userWith({ max_rows_per_statement: 3 })
      const client = await connect()
      expect((await client.query(series(3))).rows).toEqual(numbers(3))
      const error = await failure(client.query(series(50)))
      expect(error).toEqual({
        code: '54000',
        message: 'statement would return more than 3 rows (max_rows_per_statement)',
      })
      // Extended protocol too, and the connection goes on.
      expect((await failure(client.query(`${series(10)} LIMIT $1`, [5]))).code).toBe('54000')
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      const rows = await h.auditRows()
      const cut = rows.find((r) => r.original_query === series(50))
      expect(cut).toMatchObject({
        status: 'error',
        error_message: 'statement would return more than 3 rows (max_rows_per_statement)',
      })
    })

    it('cancels the upstream statement a row limit cut: nothing keeps running', async (t) => {
      const admin = h.upstreamAdmin
      if (!admin) return t.skip()
      const { connect } = await userWith({ max_rows_per_statement: 10 })
      const client = await connect()
      const marker = `cut_${Date.now()}`
      const started = performance.now()
      const sql = `SELECT g AS ${marker} FROM generate_series(1, 3000000) g`
      expect((await failure(client.query(sql))).code).toBe('54000')
      const running = await admin.client.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1`,
        [`%AS ${marker}%`],
      )
      expect(running.rows).toEqual([{ n: 0 }])
      expect(performance.now() - started).toBeLessThan(20_000)
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    })

    it('fails the transaction block a row limit cut, as PostgreSQL fails one on any error', async () => {
      const { connect } = await userWith({ max_rows_per_statement: 2 })
      const client = await connect()
      await client.query('BEGIN')
      expect((await failure(client.query(series(1000)))).code).toBe('54000')
      expect((await failure(client.query('SELECT 1'))).code).toBe('25P02')
      await client.query('ROLLBACK')
      expect((await client.query(series(2))).rows).toEqual(numbers(2))
    })

    it('truncates with a WARNING and the count actually sent, in both protocols', async () => {
      const { connect } = await userWith({ max_rows_per_statement: 4, on_row_limit: 'truncate' })
      const client = await connect()
      const notices: {
        severity?: string | undefined
        code?: string | undefined
        message?: string | undefined
      }[] = []
      client.on('notice', (n) =>
        notices.push({ severity: n.severity, code: n.code, message: n.message }),
      )
      const simple = await client.query(series(10))
      expect(simple.rows).toEqual(numbers(4))
      expect(simple.rowCount).toBe(4)
      const extended = await client.query(`${series(10)} LIMIT $1`, [9])
      expect(extended.rows).toEqual(numbers(4))
      expect(extended.rowCount).toBe(4)
      expect(notices.map((n) => [n.severity, n.code, n.message])).toEqual([
        ['WARNING', '01000', 'result truncated at 4 rows (max_rows_per_statement)'],
        ['WARNING', '01000', 'result truncated at 4 rows (max_rows_per_statement)'],
      ])
      // Repeated simple statements run as prepared upstream: the limit holds there too.
      for (let i = 0; i < 3; i++) expect((await client.query(series(6))).rows).toEqual(numbers(4))
      expect((await client.query(series(4))).rows).toEqual(numbers(4))
      const row = (await h.auditRows()).find((r) => r.original_query === series(10))
      expect(row).toMatchObject({
        status: 'success',
        error_message: 'result truncated at 4 rows (max_rows_per_statement)',
      })
    })

    it('counts a cursor across its FETCHes', async () => {
      const { connect } = await userWith({ max_rows_per_statement: 5, on_row_limit: 'truncate' })
      const client = await connect()
      await client.query('BEGIN')
      await client.query(`DECLARE c CURSOR FOR ${series(20)}`)
      expect((await client.query('FETCH 3 FROM c')).rows).toEqual(numbers(3))
      const second = await client.query('FETCH 3 FROM c')
      expect(second.rows).toEqual([{ n: 4 }, { n: 5 }])
      expect((await client.query('FETCH 3 FROM c')).rows).toEqual([])
      await client.query('COMMIT')
    })

    it('counts a portal across its Executes (a cursor reading in pieces)', async () => {
      const { connect } = await userWith({ max_rows_per_statement: 5, on_row_limit: 'truncate' })
      const client = await connect()
      const cursor = client.query(new Cursor(series(20)))
      expect(await cursor.read(3)).toEqual(numbers(3))
      expect(await cursor.read(3)).toEqual([{ n: 4 }, { n: 5 }])
      expect(await cursor.read(3)).toEqual([])
      await cursor.close()
      const strict = await userWith({ max_rows_per_statement: 5 })
      const other = await strict.connect()
      const failing = other.query(new Cursor(series(20)))
      expect(await failing.read(3)).toEqual(numbers(3))
      expect((await failure(failing.read(3))).code).toBe('54000')
      expect((await other.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    })

    it('fails the transaction block of an extended-protocol statement a row limit cut', async () => {
      const { connect } = await userWith({ max_rows_per_statement: 2 })
      const client = await connect()
      await client.query('BEGIN')
      expect((await failure(client.query(`${series(500)} LIMIT $1`, [400]))).code).toBe('54000')
      expect((await failure(client.query('SELECT $1::int AS i', [1]))).code).toBe('25P02')
      await client.query('ROLLBACK')
      expect((await client.query('SELECT $1::int AS i', [1])).rows).toEqual([{ i: 1 }])
    })

    it('applies the tightest of the user and its roles', async () => {
      const { connect } = await userWith(
        { max_rows_per_statement: 10, on_row_limit: 'truncate' },
        { roleLimits: { max_rows_per_statement: 3 } },
      )
      const client = await connect()
      // The role's 3 rows, and its default (error) over the user's truncate.
      expect((await client.query(series(3))).rows).toEqual(numbers(3))
      expect((await failure(client.query(series(4)))).code).toBe('54000')
    })

    it('applies a change of limits at the next statement, without reconnecting', async () => {
      const { user, connect } = await userWith(null)
      const client = await connect()
      expect((await client.query(series(5))).rows).toEqual(numbers(5))
      await h.store.users.update(
        user.id,
        { limits: { max_rows_per_statement: 2 } },
        h.shop.admin.id,
      )
      await new Promise((r) => setTimeout(r, 50))
      expect((await failure(client.query(series(5)))).code).toBe('54000')
    })

    it('refuses statements past the rate limit with 53400 until the minute ends', async () => {
      now = Date.UTC(2026, 0, 1, 0, 1, 48)
      const { connect } = await userWith({ max_statements_per_minute: 3 })
      const client = await connect()
      for (let i = 0; i < 3; i++) await client.query(`SELECT ${i} AS i`)
      const refused = client.query('SELECT 42 AS refused_by_rate')
      await expect(refused).rejects.toMatchObject({
        code: '53400',
        message: 'too many statements: the limit is 3 per minute (max_statements_per_minute)',
        detail: 'The limit is reached for the current minute; retry after 12 s.',
      })
      // Extended protocol too; transaction control is never refused.
      expect((await failure(client.query('SELECT $1::int AS i', [1]))).code).toBe('53400')
      await client.query('BEGIN')
      await client.query('ROLLBACK')
      now += 12_000
      expect((await client.query('SELECT 7 AS i')).rows).toEqual([{ i: 7 }])
      const row = (await h.auditRows()).find(
        (r) => r.original_query === 'SELECT 42 AS refused_by_rate',
      )
      expect(row).toMatchObject({ status: 'error', rewritten_query: null })
      expect(row?.error_message).toContain('max_statements_per_minute')
    })

    it('refuses a second concurrent statement of the user with 53400 and when to retry', async (t) => {
      // PGlite runs a statement on the proxy's own thread: nothing else runs meanwhile.
      if (h.kind === 'pglite') t.skip()
      const { connect } = await userWith({ max_concurrent_statements: 1 })
      const first = await connect()
      const second = await connect()
      // pg_sleep is refused through Palisade (it holds the session): a long count instead.
      const long = first.query('SELECT count(*) AS n FROM generate_series(1, 8000000) g')
      await new Promise((r) => setTimeout(r, 150))
      const error = (await second.query('SELECT 1 AS one').catch((e) => e)) as pg.DatabaseError
      expect(error.code).toBe('53400')
      expect(error.message).toBe(
        'too many concurrent statements: the limit is 1 (max_concurrent_statements)',
      )
      expect(error.detail).toBe(
        '1 statement is already running for this user; retry after 1 s, once one has ended.',
      )
      expect((await long).rows).toEqual([{ n: '8000000' }])
      expect((await second.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    })

    it('counts refusals and cuts in the metrics, by limit', async () => {
      const cut = /limit="rows_error"\} (\d+)/
      const before = Number(cut.exec((await metrics.render()).body)?.[1] ?? 0)
      const { connect } = await userWith({ max_rows_per_statement: 1 })
      const client = await connect()
      expect((await failure(client.query(`${series(3)} LIMIT $1`, [3]))).code).toBe('54000')
      const text = (await metrics.render()).body
      expect(Number(cut.exec(text)?.[1])).toBe(before + 1)
      expect(text).toMatch(
        /palisade_statements_limited_total\{datasource="shop",limit="rows_error"\} [1-9]/,
      )
      expect(text).toMatch(
        /palisade_statements_limited_total\{datasource="shop",limit="rows_truncated"\} [1-9]/,
      )
      expect(text).toMatch(
        /palisade_statements_limited_total\{datasource="shop",limit="rate"\} [1-9]/,
      )
    })

    it('runs an extended-protocol batch of several Executes under a concurrency limit of one', async () => {
      const { user } = await userWith({ max_concurrent_statements: 1 })
      const client = await WireClient.connect(h.plane.port, user.username)
      try {
        client.send(
          Buffer.concat([
            serialize.parse({ text: 'SELECT 1 AS one' }),
            serialize.bind({}),
            serialize.execute({}),
            serialize.bind({}),
            serialize.execute({}),
            serialize.sync(),
          ]),
        )
        const frames = await client.untilReady(1)
        expect(framesOf(frames, 'E')).toEqual([])
        expect(framesOf(frames, 'C')).toHaveLength(2)
      } finally {
        client.close()
      }
    })

    it('costs nothing for a user without limits: no count, no refusal', async () => {
      const { connect } = await userWith(null)
      const client = await connect()
      expect((await client.query(series(200))).rows).toHaveLength(200)
    })
  })
}
