import type { Client } from 'pg'
import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { errorCode, rawExchange, startupMessage, startupPacket } from './fixtures/raw-socket.js'
import { selfSignedPair } from './fixtures/self-signed.js'

/** Awaits a rejection and returns its SQLSTATE and message. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (error) {
    const e = error as { code?: string; message: string }
    return { code: e.code ?? '', message: e.message }
  }
  throw new Error('expected the query to fail')
}

/** Waits until `check` resolves true (polling), or fails after `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The data-plane suite, run once per upstream kind. */
export function runPgwireCases(name: string, makeHarness: MakeHarness): void {
  describe(`data plane over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
    })
    afterAll(async () => {
      await h?.close()
    })

    it('authenticates with SCRAM and applies the row filter of the user', async () => {
      const alice = await h.connect('alice')
      const { rows } = await alice.query('SELECT id, amount FROM orders ORDER BY id')
      expect(rows).toEqual([
        { id: 10, amount: '10.00' },
        { id: 11, amount: '20.00' },
      ])
    })

    it('answers a wrong password and an unknown user with the same 28P01', async () => {
      const wrong = await failure(h.connect('alice', { password: 'nope' }))
      expect(wrong).toEqual({
        code: '28P01',
        message: 'password authentication failed for user "alice"',
      })
      const unknown = await failure(h.connect('mallory'))
      expect(unknown).toEqual({
        code: '28P01',
        message: 'password authentication failed for user "mallory"',
      })
    })

    it('answers an unknown datasource and one without access with the same 3D000', async () => {
      const unknown = await failure(h.connect('alice', { database: 'nowhere' }))
      expect(unknown).toEqual({ code: '3D000', message: 'database "nowhere" does not exist' })
      const denied = await failure(h.connect('bob'))
      expect(denied).toEqual({ code: '3D000', message: 'database "shop" does not exist' })
    })

    it('masks, strips denied columns and hides denied tables through the proxy', async () => {
      const alice = await h.connect('alice')
      const result = await alice.query('SELECT * FROM customers ORDER BY id')
      expect(result.fields.map((f) => f.name)).toEqual(['id', 'tenant', 'name', 'email'])
      expect(result.rows).toEqual([
        { id: 1, tenant: 'acme', name: 'Ann', email: '***' },
        { id: 2, tenant: 'acme', name: 'Bob', email: '***' },
      ])
      expect(await failure(alice.query('SELECT id, ssn FROM customers'))).toMatchObject({
        code: '42703',
      })
      const hidden = await failure(alice.query('SELECT * FROM secrets'))
      const missing = await failure(alice.query('SELECT * FROM nothing_here'))
      expect(hidden.code).toBe('42P01')
      expect(missing.code).toBe('42P01')
      expect(await failure(alice.query('EXPLAIN SELECT * FROM secrets'))).toEqual(hidden)
    })

    it('lets a user without policies read everything', async () => {
      const carol = await h.connect('carol')
      const { rows } = await carol.query('SELECT count(*)::int AS n FROM orders')
      expect(rows).toEqual([{ n: 4 }])
    })

    it('runs every statement of a multi-statement simple query', async () => {
      const alice = await h.connect('alice')
      const results = (await alice.query(
        'SELECT count(*)::int AS n FROM orders; SELECT name FROM customers ORDER BY id',
      )) as unknown as { rows: unknown[] }[]
      expect(results.map((r) => r.rows)).toEqual([[{ n: 2 }], [{ name: 'Ann' }, { name: 'Bob' }]])
    })

    it('answers an empty query with EmptyQueryResponse', async () => {
      const alice = await h.connect('alice')
      const result = await alice.query('')
      expect(result.rows ?? []).toEqual([])
    })

    it('refuses a write with 25006 and audits it as denied before anything runs', async () => {
      const alice = await h.connect('alice', { application_name: 'writer-test' })
      const denied = await failure(alice.query('SELECT 1; DELETE FROM orders'))
      expect(denied).toEqual({ code: '25006', message: 'Only read-only queries are allowed' })
      const rows = await h.auditRows()
      const row = rows.find((r) => r.client_info === 'writer-test')
      expect(row).toMatchObject({
        status: 'denied',
        error_message: 'Only read-only queries are allowed',
        rewritten_query: null,
        execution_time_ms: null,
        username: 'alice',
      })
      expect(row?.original_query).toContain('DELETE FROM orders')
    })

    it('refuses the whole write matrix with 25006 in both protocols, audited and without effect', async () => {
      const alice = await h.connect('alice', { application_name: 'write-matrix' })
      const writes = [
        "INSERT INTO orders VALUES (99, 'acme', 1, 1.00)",
        'UPDATE orders SET amount = 0',
        'DELETE FROM orders',
        'DROP TABLE orders',
        'CREATE TABLE stolen (id int)',
        "SET search_path = 'public'",
        'COPY orders FROM STDIN',
        "DO 'BEGIN END'",
        'CALL refresh()',
        'SELECT * INTO stolen FROM orders',
        'SELECT * FROM orders FOR UPDATE',
        'LOCK TABLE orders',
        'LISTEN changes',
      ]
      for (const [i, sql] of writes.entries()) {
        expect(await failure(alice.query(sql)), sql).toEqual({
          code: '25006',
          message: 'Only read-only queries are allowed',
        })
        // Extended protocol (a named statement forces Parse): rejected at Parse.
        expect(await failure(alice.query({ name: `write-${i}`, text: sql })), sql).toMatchObject({
          code: '25006',
        })
      }
      expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      const audited = (await h.auditRows()).filter((r) => r.client_info === 'write-matrix')
      for (const sql of writes) {
        const rows = audited.filter((r) => r.original_query === sql)
        expect(rows, sql).toHaveLength(2)
        for (const row of rows) expect(row.status, sql).toBe('denied')
      }
    })

    it('runs a repeated simple SELECT as a prepared statement upstream, with the same answers', async () => {
      const alice = await h.connect('alice')
      const sql = 'SELECT id, amount FROM orders WHERE id > 0 ORDER BY id'
      // Its number goes upstream as a parameter (docs/rewrite.md#literal-parameters).
      const upstreamStatements = async () =>
        (
          await h.upstreamPglite?.query<{ statement: string }>(
            "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'palisade_%'",
          )
        )?.rows.filter((r) => r.statement.includes('id > $1')).length ?? 0
      const before = await upstreamStatements()
      const expected = [
        { id: 10, amount: '10.00' },
        { id: 11, amount: '20.00' },
      ]
      expect((await alice.query(sql)).rows).toEqual(expected)
      // An ad-hoc query costs no upstream statement; the second run prepares one.
      if (h.upstreamPglite) expect(await upstreamStatements()).toBe(before)
      for (let i = 0; i < 3; i++) {
        const result = await alice.query(sql)
        expect(result.rows).toEqual(expected)
        expect(result.fields.map((f) => f.name)).toEqual(['id', 'amount'])
        expect(result.command).toBe('SELECT')
      }
      if (h.upstreamPglite) expect(await upstreamStatements()).toBe(before + 1)
      // Errors, transactions, parameters in literals and several statements read as before.
      const divide = 'SELECT 1 / (id - id) FROM orders'
      for (let i = 0; i < 3; i++) expect((await failure(alice.query(divide))).code).toBe('22012')
      await alice.query('BEGIN')
      for (let i = 0; i < 2; i++) expect((await alice.query(sql)).rows).toEqual(expected)
      expect((await failure(alice.query(divide))).code).toBe('22012')
      expect((await failure(alice.query(sql))).code).toBe('25P02')
      await alice.query('ROLLBACK')
      for (let i = 0; i < 2; i++) {
        expect((await alice.query("SELECT '$1' AS x")).rows).toEqual([{ x: '$1' }])
      }
      const several = 'SELECT 1 AS a; SELECT count(*)::int AS n FROM orders'
      for (let i = 0; i < 2; i++) {
        const results = (await alice.query(several)) as unknown as Array<{ rows: unknown[] }>
        expect(results.map((r) => r.rows)).toEqual([[{ a: 1 }], [{ n: 2 }]])
      }
      const audited = (await h.auditRows()).filter((r) => r.original_query === sql)
      expect(audited.filter((r) => r.status === 'success')).toHaveLength(6)
      expect(audited.filter((r) => r.status === 'error')).toHaveLength(1)
      expect(audited.every((r) => r.rewritten_query?.includes('tenant'))).toBe(true)
    })

    it('runs parameterized queries through the extended protocol', async () => {
      const alice = await h.connect('alice')
      const { rows } = await alice.query('SELECT id FROM orders WHERE amount > $1 ORDER BY id', [
        '5',
      ])
      expect(rows).toEqual([{ id: 10 }, { id: 11 }])
      const again = await alice.query({
        name: 'by-id',
        text: 'SELECT id, tenant FROM orders WHERE id = $1',
        values: [12],
      })
      expect(again.rows).toEqual([])
      const hidden = await failure(alice.query('SELECT * FROM secrets WHERE id = $1', [1]))
      expect(hidden.code).toBe('42P01')
      // The connection is usable after an error in the extended protocol.
      expect((await alice.query('SELECT $1::int AS x', [7])).rows).toEqual([{ x: 7 }])
    })

    it('uses cursors inside a read-only transaction', async () => {
      const alice = await h.connect('alice')
      await alice.query('BEGIN')
      await alice.query('DECLARE c CURSOR FOR SELECT id FROM orders ORDER BY id')
      expect((await alice.query('FETCH 1 FROM c')).rows).toEqual([{ id: 10 }])
      expect((await alice.query('FETCH ALL FROM c')).rows).toEqual([{ id: 11 }])
      await alice.query('CLOSE c')
      const write = await failure(alice.query('UPDATE orders SET amount = 0'))
      expect(write.code).toBe('25006')
      await alice.query('COMMIT')
      expect((await alice.query('SHOW transaction_read_only')).rows).toEqual([
        { transaction_read_only: 'on' },
      ])
    })

    it('chains read-only transactions with COMMIT AND CHAIN and ROLLBACK AND CHAIN', async () => {
      const alice = await h.connect('alice')
      await alice.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
      expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      await alice.query('COMMIT AND CHAIN')
      // The chained transaction keeps the characteristics of the one it follows.
      expect((await alice.query('SHOW transaction_read_only')).rows).toEqual([
        { transaction_read_only: 'on' },
      ])
      expect((await alice.query('SHOW transaction_isolation')).rows).toEqual([
        { transaction_isolation: 'repeatable read' },
      ])
      expect((await failure(alice.query('UPDATE orders SET amount = 0'))).code).toBe('25006')
      await alice.query('ROLLBACK AND CHAIN')
      expect((await alice.query('SHOW transaction_read_only')).rows).toEqual([
        { transaction_read_only: 'on' },
      ])
      await alice.query('COMMIT')
      // Outside a transaction block PostgreSQL's own error comes back.
      expect((await failure(alice.query('COMMIT AND CHAIN'))).code).toBe('25P01')
      const rows = (await h.auditRows()).filter((r) => r.original_query === 'COMMIT AND CHAIN')
      expect(rows.map((r) => r.status).sort()).toEqual(['error', 'success'])
    })

    it('records the application name and later SETs as client_info', async () => {
      const alice = await h.connect('alice', { application_name: 'report-app' })
      await alice.query('SELECT 1 AS one')
      await alice.query("SET application_name = 'renamed-app'")
      await alice.query('SELECT 2 AS two')
      const rows = await h.auditRows()
      expect(rows.find((r) => r.original_query === 'SELECT 1 AS one')?.client_info).toBe(
        'report-app',
      )
      expect(rows.find((r) => r.original_query === 'SELECT 2 AS two')?.client_info).toBe(
        'renamed-app',
      )
    })

    it('writes audit rows with status, rewritten SQL and the policies applied', async () => {
      const alice = await h.connect('alice', { application_name: 'audit-test' })
      await alice.query('SELECT id FROM orders WHERE id < 100')
      await alice.query('SELECT id FROM orders WHERE id = $1', [10])
      await failure(alice.query('SELECT 1/0 AS boom'))
      const rows = (await h.auditRows()).filter((r) => r.client_info === 'audit-test')
      const simple = rows.find((r) => r.original_query === 'SELECT id FROM orders WHERE id < 100')
      expect(simple).toMatchObject({ status: 'success', error_message: null })
      expect(simple?.execution_time_ms).not.toBeNull()
      expect(simple?.rewritten_query).toContain('acme')
      const applied = JSON.parse(simple?.policies_applied ?? '[]') as { policy_id: string }[]
      expect(applied.map((p) => p.policy_id)).toEqual([h.shop.policies.orders.id])
      expect(applied[0]).toMatchObject({ version: 1, name: 'orders-tenant' })
      const extended = rows.find((r) => r.original_query === 'SELECT id FROM orders WHERE id = $1')
      expect(extended).toMatchObject({ status: 'success' })
      const failed = rows.find((r) => r.original_query === 'SELECT 1/0 AS boom')
      expect(failed).toMatchObject({ status: 'error', error_message: 'division by zero' })
    })

    it('applies a policy change to a connected client and re-prepares its named statements', async () => {
      const alice = await h.connect('alice')
      const named = { name: 'count-orders', text: 'SELECT count(*)::int AS n FROM orders' }
      // The same query as unnamed statements shares one upstream statement (repeated on purpose).
      const unnamed = () => alice.query('SELECT count(*)::int AS n FROM orders WHERE id > $1', [0])
      expect((await alice.query(named)).rows).toEqual([{ n: 2 }])
      for (let i = 0; i < 3; i++) expect((await unnamed()).rows).toEqual([{ n: 2 }])
      const { orders } = h.shop.policies
      const updated = await h.store.policies.update(
        orders.id,
        { version: orders.version, filter_expression: 'tenant = {user.tenant} AND id = 10' },
        h.shop.admin.id,
      )
      try {
        expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([
          { n: 1 },
        ])
        expect((await alice.query(named)).rows).toEqual([{ n: 1 }])
        expect((await unnamed()).rows).toEqual([{ n: 1 }])
      } finally {
        const restored = await h.store.policies.update(
          orders.id,
          { version: updated.version, filter_expression: 'tenant = {user.tenant}' },
          h.shop.admin.id,
        )
        h.shop.policies.orders = restored
      }
      expect((await alice.query(named)).rows).toEqual([{ n: 2 }])
      expect((await unnamed()).rows).toEqual([{ n: 2 }])
    })

    it('applies every kind of change to an open connection, in both protocols', async () => {
      const { store, shop } = h
      const admin = shop.admin.id
      const alice = await h.connect('alice')
      // Simple protocol and a named prepared statement (extended, re-prepared on change).
      const counts = async () => {
        const simple = (await alice.query('SELECT count(*)::int AS n FROM customers')).rows[0]?.n
        const prepared = (
          await alice.query({
            name: 'live-changes',
            text: 'SELECT count(*)::int AS n FROM customers WHERE id > $1',
            values: [0],
          })
        ).rows[0]?.n
        return [simple, prepared]
      }
      expect(await counts()).toEqual([2, 2])
      const policy = shop.policies.customers
      // Policy disabled, then enabled again.
      const disabled = await store.policies.update(
        policy.id,
        { version: policy.version, is_enabled: false },
        admin,
      )
      expect(await counts()).toEqual([3, 3])
      shop.policies.customers = await store.policies.update(
        policy.id,
        { version: disabled.version, is_enabled: true },
        admin,
      )
      expect(await counts()).toEqual([2, 2])
      // Attribute change: alice moves to the other tenant.
      await store.users.update(shop.alice.id, { attributes: { tenant: 'globex' } }, admin)
      expect(await counts()).toEqual([1, 1])
      await store.users.update(shop.alice.id, { attributes: { tenant: 'acme' } }, admin)
      expect(await counts()).toEqual([2, 2])
      // A role's policy: applies through membership, stops with deactivation and removal.
      const role = await store.roles.create({ name: `auditors_${Date.now()}` }, admin)
      const onlyOne = await store.policies.create(
        {
          name: `only-ann-${Date.now()}`,
          policy_type: 'row_filter',
          targets: [{ schemas: ['public'], tables: ['customers'] }],
          filter_expression: 'id = 1',
        },
        admin,
      )
      await store.assignments.assign(
        shop.datasourceId,
        { policy_id: onlyOne.id, scope: 'role', role_id: role.id },
        admin,
      )
      await store.roles.addMembers(role.id, { user_ids: [shop.alice.id] }, admin)
      expect(await counts()).toEqual([1, 1])
      await store.roles.update(role.id, { is_active: false }, admin)
      expect(await counts()).toEqual([2, 2])
      await store.roles.update(role.id, { is_active: true }, admin)
      expect(await counts()).toEqual([1, 1])
      await store.roles.removeMember(role.id, shop.alice.id, admin)
      expect(await counts()).toEqual([2, 2])
      await store.policies.delete(onlyOne.id, admin)
      await store.roles.delete(role.id, admin)
    })

    it('survives malformed messages, answering 08P01 and serving other clients', async () => {
      const garbage = await rawExchange(h.plane.port, [Buffer.from([0, 0, 0, 8, 1, 2, 3, 4])])
      expect(errorCode(garbage)).toBe('08P01')
      const badVersion = await rawExchange(h.plane.port, [startupPacket(0x00020000)])
      expect(errorCode(badVersion)).toBe('08P01')
      const noUser = await rawExchange(h.plane.port, [startupMessage({ database: 'shop' })])
      expect(errorCode(noUser)).toBe('28000')
      const badSasl = await rawExchange(h.plane.port, [
        startupMessage({ user: 'alice', database: 'shop' }),
        Buffer.from([0x70, 0, 0, 0, 6, 0x41, 0]),
      ])
      expect(errorCode(badSasl)).toBe('08P01')
      const gss = await rawExchange(h.plane.port, [startupPacket(80877104)], 300)
      expect(gss.subarray(0, 1).toString()).toBe('N')
      // Malformed messages after authentication: protocol-strictness.cases.ts.
      const fresh = await h.connect('alice')
      expect((await fresh.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
    })

    it('forwards a CancelRequest to the bound upstream session', async (ctx) => {
      if (h.kind === 'pglite') ctx.skip() // PGlite runs statements on this thread: nothing can interrupt one.
      const alice = await h.connect('alice')
      const key = alice as unknown as { processID: number; secretKey: number }
      const sql = `SELECT count(*) AS canceled_${Date.now()} FROM generate_series(1, 2000000000) AS g(x)`
      const running = failure(alice.query(sql))
      await new Promise((r) => setTimeout(r, 300))
      await rawExchange(h.plane.port, [serialize.cancel(key.processID, key.secretKey)], 500)
      expect(await running).toMatchObject({ code: '57014' })
      expect((await alice.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
      // The canceled statement has its one audit row, as an error with the upstream's cause.
      const rows = (await h.auditRows()).filter((r) => r.original_query === sql)
      expect(rows.map((r) => [r.status, r.error_message])).toEqual([
        ['error', 'canceling statement due to user request'],
      ])
    })

    it('ends a session with 08006 once its access is revoked', async () => {
      const carol: Client = await h.connect('carol')
      expect((await carol.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
      await h.store.access.setUsers(
        h.shop.datasourceId,
        { user_ids: [h.shop.alice.id] },
        h.shop.admin.id,
      )
      expect(await failure(carol.query('SELECT 1 AS ok'))).toEqual({
        code: '08006',
        message: 'Session context not found - please reconnect',
      })
      expect(await failure(h.connect('carol'))).toMatchObject({ code: '3D000' })
      const alice = await h.connect('alice')
      expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
    })

    it('refuses an ssl-requiring client cleanly when TLS is not configured', async () => {
      const refused = await failure(h.connect('alice', { ssl: true }))
      expect(refused.message).toBe('The server does not support SSL connections')
      const alice = await h.connect('alice')
      expect((await alice.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
    })

    it('serves TLS clients and refuses plaintext ones with 28000 when TLS is required', async (ctx) => {
      const pair = selfSignedPair()
      if (!pair) return ctx.skip(true, 'openssl is not installed: cannot make a test certificate')
      const tls = await makeHarness({ plane: { tls: pair, requireTls: true } })
      try {
        const secure = await tls.connect('alice', { ssl: { rejectUnauthorized: false } })
        const { rows } = await secure.query('SELECT count(*)::int AS n FROM orders')
        expect(rows).toEqual([{ n: 2 }])
        expect(await failure(tls.connect('alice'))).toEqual({
          code: '28000',
          message: 'TLS connection required',
        })
      } finally {
        await tls.close()
      }
    })

    it('answers 53300 when no upstream session frees up within the acquire timeout', async (ctx) => {
      // PGlite is one shared backend with no session limit: only the PostgreSQL pool has one.
      if (h.kind === 'pglite') return ctx.skip(true, 'the PGlite upstream has no acquire limit')
      const small = await makeHarness({ poolSize: 1, plane: { acquireTimeoutMs: 300 } })
      try {
        const holder = await small.connect('alice')
        if (small.poolMode === 'transaction') {
          // A client holds an upstream session only inside a transaction: the next one waits.
          await holder.query('BEGIN')
          await holder.query('SELECT 1')
          const waiting = await small.connect('carol')
          expect(await failure(waiting.query('SELECT 1'))).toEqual({
            code: '53300',
            message: 'no upstream session of datasource "shop" became free within 0.3 s',
          })
          await holder.query('COMMIT')
        } else {
          expect(await failure(small.connect('carol'))).toEqual({
            code: '53300',
            message: 'too many connections for datasource "shop"',
          })
        }
        expect((await holder.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
      } finally {
        await small.close()
      }
    })

    it('ends a session with 08006 when its upstream connection is lost and serves others', async (ctx) => {
      const admin = h.upstreamAdmin
      if (!admin) return ctx.skip(true, 'only a PostgreSQL upstream can be terminated')
      const doomed = await h.connect('alice')
      // Inside a transaction: under transaction pooling an idle client holds no upstream session.
      await doomed.query('BEGIN')
      await doomed.query("SET application_name = 'palisade-doomed'")
      const sessions = async () =>
        (
          await admin.client.query(
            'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
            [admin.database, 'palisade-doomed'],
          )
        ).rowCount ?? 0
      expect(await sessions()).toBe(1)
      await admin.client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
        [admin.database, 'palisade-doomed'],
      )
      await eventually(async () => (await sessions()) === 0)
      // Two statements in one Query: each reached Palisade, so each has its audit row.
      const tag = Date.now()
      const first = `SELECT 1 AS lost_${tag}`
      const second = `SELECT 2 AS also_lost_${tag}`
      expect(await failure(doomed.query(`${first}; ${second}`))).toEqual({
        code: '08006',
        message: 'upstream connection lost',
      })
      const audited = (await h.auditRows())
        .filter((r) => r.original_query.includes(`lost_${tag}`))
        .map((r) => [r.original_query, r.status])
      expect(audited.sort()).toEqual([
        [first, 'error'],
        [second, 'error'],
      ])
      const fresh = await h.connect('alice')
      expect((await fresh.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
    })

    it('fails the transaction after a rejected statement until ROLLBACK, as PostgreSQL does', async () => {
      const alice = await h.connect('alice')
      await alice.query('BEGIN')
      expect(await failure(alice.query('SELECT * FROM secrets'))).toMatchObject({ code: '42P01' })
      expect(await failure(alice.query('SELECT 1 AS one'))).toEqual({
        code: '25P02',
        message: 'current transaction is aborted, commands ignored until end of transaction block',
      })
      await alice.query('ROLLBACK')
      expect((await alice.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      // The same in the extended protocol.
      await alice.query('BEGIN')
      expect(await failure(alice.query('SELECT * FROM secrets WHERE id = $1', [1]))).toMatchObject({
        code: '42P01',
      })
      expect(await failure(alice.query('SELECT $1::int AS x', [1]))).toMatchObject({
        code: '25P02',
      })
      await alice.query('ROLLBACK')
      expect((await alice.query('SELECT $1::int AS x', [7])).rows).toEqual([{ x: 7 }])
    })
  })
}
