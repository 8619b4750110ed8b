import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHAIN_KEY_PURPOSE } from '../../src/audit/audit-chain.js'
import { signCheckpoint } from '../../src/audit/audit-checkpoints.js'
import { type ChunkRow, decodeChunk, sealChunk } from '../../src/audit/audit-chunk-format.js'
import {
  byteaBytes,
  byteaText,
  packEntries,
  unpackEntries,
} from '../../src/audit/audit-entry-pack.js'
import { QueryAuditWriter } from '../../src/audit/query-audit-writer.js'
import type { QueryAuditFilter, Store, User } from '../../src/index.js'
import { MissingAuditEntryError } from '../../src/index.js'
import { rowsOf } from '../../src/kernel/db.js'
import { queryAuditCheckpoints, roles } from '../../src/tables.js'
import { bootstrapAdmin, PASSWORD, storeError, unique } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const U1 = '0190f000-0000-7000-8000-0000000000a1'
const U2 = '0190f000-0000-7000-8000-0000000000a2'
const D1 = '0190f000-0000-7000-8000-0000000000d1'

/** The least a query-audit record carries, for the writer's own tests. */
const minimalRecord = (originalQuery: string) => ({
  user_id: U1,
  username: 'x',
  data_source_id: D1,
  datasource_name: 'd',
  original_query: originalQuery,
  status: 'success' as const,
})

/** Both audit logs and the audited-transaction rule (docs/audit.md#query-audit, 2.2; docs/audit.md#admin-audit, 16). */
export function auditCases(makeStore: MakeStore): void {
  describe('audit logs', () => {
    let store: Store
    let admin: User
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
    })
    afterAll(() => store.close())

    it('writes query audit rows in batches and lists them newest first with filters', async () => {
      const base = Date.parse('2026-01-01T00:00:00Z')
      for (let i = 0; i < 1200; i++) {
        store.audit.queries.write({
          user_id: i % 2 ? U1 : U2,
          username: i % 2 ? 'one' : 'two',
          data_source_id: D1,
          datasource_name: 'shop',
          original_query: `SELECT ${i}`,
          rewritten_query: i % 3 ? `SELECT ${i}` : null,
          policies_applied: [{ policy_id: U1, version: 1, name: 'p', decision: null }],
          execution_time_ms: i % 3 ? 1 : null,
          status: i % 3 ? 'success' : 'denied',
          error_message: i % 3 ? null : 'Only read-only queries are allowed',
          created_at: new Date(base + i * 1000),
        })
      }
      await store.audit.queries.flush()
      expect(store.audit.queries.writer.stats.written).toBe(1200)
      const all = await store.audit.queries.list({ datasource_id: D1 })
      expect([all.total, all.page_size, all.data[0]?.original_query]).toEqual([
        1200,
        50,
        'SELECT 1199',
      ])
      expect(JSON.parse(all.data[0]?.policies_applied as string)).toEqual([
        { policy_id: U1, version: 1, name: 'p', decision: null },
      ])
      expect((await store.audit.queries.list({ user_id: U1, page_size: 1 })).total).toBe(600)
      expect((await store.audit.queries.list({ status: 'denied', datasource_id: D1 })).total).toBe(
        400,
      )
      const window = await store.audit.queries.list({
        from: '2026-01-01T00:00:10Z',
        until: '2026-01-01T01:00:20+01:00',
        limit: 5,
      })
      expect([window.total, window.data.map((r) => r.original_query)]).toEqual([
        11,
        ['SELECT 20', 'SELECT 19', 'SELECT 18', 'SELECT 17', 'SELECT 16'],
      ])
      expect(
        (await store.audit.queries.list({ datasource_id: D1, page: 30, page_size: 50 })).data,
      ).toEqual([])
      for (const filter of [
        { status: 'ok' },
        { user_id: 'nope' },
        { from: 'yesterday' },
        { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' },
        { from: '2026-01-01T00:00:00Z', since: '2026-01-02T00:00:00Z' },
        { page_size: 10, limit: 20 },
      ]) {
        const error = await storeError(store.audit.queries.list(filter))
        expect([error.status, error.code]).toEqual([400, 'invalid_parameter'])
      }
    })

    it('counts totals exactly across whole hours and partial edges', async () => {
      const D2 = '0190f000-0000-7000-8000-0000000000d2'
      const base = Date.parse('2026-02-01T00:00:00Z')
      for (let i = 0; i < 12; i++) {
        store.audit.queries.write({
          user_id: U1,
          username: 'one',
          data_source_id: D2,
          datasource_name: 'b',
          original_query: `q${i}`,
          status: i % 2 ? 'success' : 'error',
          created_at: new Date(base + i * 20 * 60_000),
        })
      }
      await store.audit.queries.flush()
      const total = async (f: object) =>
        (await store.audit.queries.list({ datasource_id: D2, ...f })).total
      expect(await total({})).toBe(12)
      expect(
        await total({ from: new Date(base + 10 * 60_000), to: new Date(base + 150 * 60_000) }),
      ).toBe(7)
      expect(
        await total({ from: new Date(base + 60 * 60_000), to: new Date(base + 180 * 60_000 - 1) }),
      ).toBe(6)
      expect(await total({ from: new Date(base + 60 * 60_000) })).toBe(9)
      expect(await total({ to: new Date(base + 60 * 60_000) })).toBe(4)
      expect(await total({ status: 'error', from: new Date(base + 30 * 60_000) })).toBe(5)
      expect(await total({ user_id: U2 })).toBe(0)
    })

    it('finds a user or datasource whose statuses differ between its principals in one batch', async () => {
      // One batch: U1 on D3 as two principals (client infos differ) and U2 on D3 and on D4; only
      // U1's second principal and U2's on D4 have denied entries.
      const D3 = '0190f000-0000-7000-8000-0000000000d3'
      const D4 = '0190f000-0000-7000-8000-0000000000d4'
      const base = Date.parse('2026-03-01T00:10:00Z')
      const rows: [string, string, string | null, 'success' | 'denied'][] = [
        [U1, D3, 'first', 'success'],
        [U1, D3, 'second', 'success'],
        [U1, D3, 'second', 'denied'],
        [U2, D3, null, 'success'],
        [U2, D4, null, 'denied'],
        [U2, D4, null, 'denied'],
      ]
      rows.forEach(([user, ds, client, status], i) => {
        store.audit.queries.write({
          ...minimalRecord(`principals ${i}`),
          user_id: user,
          data_source_id: ds,
          client_info: client,
          status,
          created_at: new Date(base + i * 1000),
        })
      })
      await store.audit.queries.flush()
      const found = async (f: object) => {
        // Within one hour (counted on the batch) and over whole hours (hourly counts).
        const part = await store.audit.queries.list({ ...f, from: new Date(base - 60_000) })
        const whole = await store.audit.queries.list({ ...f, from: '2026-03-01T00:00:00Z' })
        expect(whole.total).toBe(part.total)
        return [part.total, part.data.map((r) => r.original_query).sort()]
      }
      expect(await found({ user_id: U1, status: 'denied' })).toEqual([1, ['principals 2']])
      expect(await found({ user_id: U1, status: 'success' })).toEqual([
        2,
        ['principals 0', 'principals 1'],
      ])
      expect(await found({ datasource_id: D3, status: 'denied' })).toEqual([1, ['principals 2']])
      expect(await found({ user_id: U2, datasource_id: D3, status: 'denied' })).toEqual([0, []])
      expect(await found({ user_id: U2, datasource_id: D4, status: 'denied' })).toEqual([
        2,
        ['principals 4', 'principals 5'],
      ])
      expect(await found({ datasource_id: D4, status: 'success' })).toEqual([0, []])
    })

    it('stores rows with NUL characters, lone surrogates and fractional times instead of losing their batch', async () => {
      const before = store.audit.queries.writer.stats.failed
      const marker = unique('odd')
      const texts = ['plain', 'nul\u0000inside', 'ünïcödé 😀', 'half \ud83d of an emoji']
      for (const [i, text] of texts.entries()) {
        store.audit.queries.write({
          user_id: U1,
          username: 'odd',
          data_source_id: D1,
          datasource_name: 'ds',
          original_query: `${marker} ${text}`,
          status: 'success',
          execution_time_ms: i + 0.5,
          error_message: text,
        })
      }
      await store.audit.queries.flush()
      expect(store.audit.queries.writer.stats.failed).toBe(before)
      const page = await store.audit.queries.list({ user_id: U1, page_size: 200 })
      const rows = page.data.filter((r) => r.original_query.startsWith(marker))
      expect(rows).toHaveLength(4)
      expect(rows.map((r) => r.execution_time_ms).sort()).toEqual([1, 2, 3, 4])
      expect(rows.some((r) => r.original_query.includes('nul\uFFFDinside'))).toBe(true)
      expect(rows.some((r) => r.original_query.includes('ünïcödé 😀'))).toBe(true)
      expect(rows.some((r) => r.original_query.includes('half \uFFFD of'))).toBe(true)
    })

    it('counts a batch whose commit answer was lost as written, once, not as lost rows', async () => {
      // The first INSERT commits, then its connection "drops" before the answer arrives.
      let dropped = false
      const flaky = new Proxy(store.db, {
        get(target, prop, receiver) {
          if (prop !== 'execute') return Reflect.get(target, prop, receiver)
          return async (query: Parameters<typeof target.execute>[0]) => {
            const result = await target.execute(query)
            if (!dropped) {
              dropped = true
              throw Object.assign(new Error('Connection terminated unexpectedly'), {
                code: 'ECONNRESET',
              })
            }
            return result
          }
        },
      })
      const problems: string[] = []
      const writer = new QueryAuditWriter(flaky, {
        intervalMs: 5,
        onProblem: (m) => problems.push(m),
      })
      const marker = unique('lost-answer')
      for (const n of [1, 2, 3]) writer.write(minimalRecord(`${marker} ${n}`))
      await writer.close()
      expect(dropped).toBe(true)
      expect(writer.stats).toEqual({ written: 3, dropped: 0, failed: 0 })
      const page = await store.audit.queries.list({ user_id: U1, page_size: 200 })
      const rows = page.data.filter((r) => r.original_query.startsWith(marker))
      expect(rows.map((r) => r.original_query).sort()).toEqual(
        [1, 2, 3].map((n) => `${marker} ${n}`),
      )
      expect(problems.join('\n')).not.toMatch(/lost/)
    })

    it('asks for a pause while the store answers but falls behind, and loses no row', async () => {
      const writer = new QueryAuditWriter(store.db, { batchSize: 10, highWater: 60 })
      const marker = unique('backlog')
      const row = (n: number) => minimalRecord(`${marker} ${n}`)
      for (let n = 0; n < 59; n++) writer.write(row(n))
      expect(writer.backlog()).toBeUndefined()
      for (let n = 59; n < 150; n++) writer.write(row(n))
      const behind = writer.backlog()
      expect(behind).toBeInstanceOf(Promise)
      await behind
      // Released once half the high-water mark or less was still waiting.
      expect(writer.queued).toBeLessThanOrEqual(30)
      expect(writer.stats.written).toBeGreaterThanOrEqual(120)
      await writer.close()
      expect(writer.stats).toEqual({ written: 150, dropped: 0, failed: 0 })
      const page = await store.audit.queries.list({ user_id: U1, page_size: 200 })
      expect(page.data.filter((r) => r.original_query.startsWith(marker))).toHaveLength(150)
    })

    it('never pauses the data plane while the store cannot be reached', async () => {
      const down = new Proxy(store.db, {
        get(target, prop, receiver) {
          if (prop !== 'execute') return Reflect.get(target, prop, receiver)
          return async () => {
            throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
          }
        },
      })
      const problems: string[] = []
      const writer = new QueryAuditWriter(down, {
        batchSize: 10,
        highWater: 20,
        intervalMs: 5,
        onProblem: (m) => problems.push(m),
      })
      const row = minimalRecord('select 1')
      for (let n = 0; n < 10; n++) writer.write(row)
      // The first batch meets the unreachable store; from then on rows only queue.
      while (!problems.some((m) => m.includes('unreachable'))) {
        await new Promise((r) => setTimeout(r, 5))
      }
      for (let n = 0; n < 40; n++) writer.write(row)
      expect(writer.queued).toBe(50)
      expect(writer.backlog()).toBeUndefined()
      await writer.close()
      expect(writer.stats.written).toBe(0)
    })

    it('drops rows beyond the queue bound and counts them instead of blocking', async () => {
      const problems: string[] = []
      const writer = new QueryAuditWriter(store.db, {
        maxQueue: 3,
        intervalMs: 10_000,
        onProblem: (m) => problems.push(m),
      })
      const row = minimalRecord('select 1')
      expect([1, 2, 3, 4, 5].map(() => writer.write(row))).toEqual([true, true, true, false, false])
      expect(writer.stats.dropped).toBe(2)
      expect(problems).toHaveLength(1)
      await writer.close()
      expect(writer.stats.written).toBe(3)
      expect(writer.write(row)).toBe(false)
    })

    it('lists admin audit entries with resource, actor, action and time filters', async () => {
      const role = await store.roles.create({ name: unique('aud') }, admin.id)
      await store.roles.update(role.id, { description: 'x' }, admin.id)
      const page = await store.audit.admin.list({ resource_type: 'role', resource_id: role.id })
      expect(page.data.map((e) => e.action)).toEqual(['update', 'create'])
      expect(typeof page.data[0]?.changes).toBe('string')
      const byActor = await store.audit.admin.list({
        actor_id: admin.id,
        action: 'update',
        resource_type: 'role',
      })
      expect(byActor.data.map((e) => e.resource_id)).toContain(role.id)
      const future = await store.audit.admin.list({ since: new Date(Date.now() + 60_000) })
      expect(future.total).toBe(0)
      for (const filter of [{ resource_type: 'table' }, { action: 'drop' }, { actor_id: 'x' }]) {
        expect((await storeError(store.audit.admin.list(filter))).code).toBe('invalid_parameter')
      }
    })

    it('refuses to update or delete audit rows at the database level', async () => {
      await expect(store.db.execute(sql`UPDATE admin_audit_log SET action = 'x'`)).rejects.toThrow()
      await expect(store.db.execute(sql`DELETE FROM query_audit_chunks`)).rejects.toThrow()
      await expect(
        store.db.execute(sql`UPDATE query_audit_chunks SET entries = 0`),
      ).rejects.toThrow()
      await expect(store.db.execute(sql`TRUNCATE query_audit_chunks`)).rejects.toThrow()
      await expect(store.db.execute(sql`UPDATE query_audit_texts SET body = ''`)).rejects.toThrow()
      await expect(store.db.execute(sql`DELETE FROM query_audit_texts`)).rejects.toThrow()
      await expect(store.db.execute(sql`TRUNCATE admin_audit_log`)).rejects.toThrow()
      await expect(store.db.execute(sql`TRUNCATE login_audit_log`)).rejects.toThrow()
    })

    it('records login events in batches and lists them with filters, newest first', async () => {
      const name = unique('guesser')
      store.logins.record({
        plane: 'data',
        outcome: 'failed',
        reason: 'unknown_user',
        username: name,
        client_address: '192.0.2.1',
        datasource_name: 'shop',
      })
      store.logins.record({
        plane: 'admin',
        outcome: 'throttled',
        reason: 'throttled_address',
        username: name,
        client_address: '192.0.2.1',
      })
      await store.logins.flush()
      const page = await store.logins.list({ username: name })
      expect(page.total).toBe(2)
      expect(page.data.map((r) => [r.plane, r.outcome, r.reason])).toEqual([
        ['admin', 'throttled', 'throttled_address'],
        ['data', 'failed', 'unknown_user'],
      ])
      expect(page.data[1]).toMatchObject({
        client_address: '192.0.2.1',
        datasource_name: 'shop',
        actor_id: null,
      })
      expect((await store.logins.list({ username: name, plane: 'data' })).total).toBe(1)
      expect((await storeError(store.logins.list({ outcome: 'guessed' }))).code).toBe(
        'invalid_parameter',
      )
    })

    it('rolls back a mutation that queued no audit entry', async () => {
      const name = unique('ghost')
      await expect(
        store.context.mutate(admin.id, async (m) => {
          await m.tx.insert(roles).values({ id: '0190f000-0000-7000-8000-0000000000f1', name })
        }),
      ).rejects.toBeInstanceOf(MissingAuditEntryError)
      const rows = await store.db.select().from(roles).where(sql`${roles.name} = ${name}`)
      expect(rows).toEqual([])
    })

    it('writes at least one audit entry in every mutating service method', async () => {
      const before = await store.audit.admin.count()
      const covered = await walkEveryMutation(store, admin)
      const mutating = mutatingMethodNames(store)
      expect(covered.sort()).toEqual(mutating.sort())
      expect(await store.audit.admin.count()).toBeGreaterThan(before + covered.length - 1)
    })
  })

  describe('store transactions', () => {
    it('commits every mutation of a transaction together, audited and chained', async () => {
      const store = await makeStore()
      try {
        const admin = await bootstrapAdmin(store)
        const names = [unique('tx'), unique('tx')]
        await store.transaction(async (scoped) => {
          for (const name of names) await scoped.roles.create({ name }, admin.id)
        })
        const roles = await store.roles.list({ search: names[0] })
        expect(roles.total).toBe(1)
        const entries = await store.audit.admin.list({ resource_type: 'role', action: 'create' })
        expect(entries.total).toBe(2)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('keeps nothing of a transaction that fails or is rolled back', async () => {
      const store = await makeStore()
      try {
        const admin = await bootstrapAdmin(store)
        const kept = unique('kept')
        await expect(
          store.transaction(async (scoped) => {
            await scoped.roles.create({ name: kept }, admin.id)
            await scoped.roles.create({ name: kept }, admin.id)
          }),
        ).rejects.toMatchObject({ code: 'already_exists' })
        const seen = await store.transaction(
          async (scoped) => {
            await scoped.roles.create({ name: kept }, admin.id)
            return (await scoped.roles.list({ search: kept })).total
          },
          { rollback: true },
        )
        expect(seen).toBe(1)
        expect((await store.roles.list({ search: kept })).total).toBe(0)
        expect((await store.audit.admin.list({ resource_type: 'role' })).total).toBe(0)
        // The chain did not move for entries that were never committed.
        await store.roles.create({ name: kept }, admin.id)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })
  })

  describe('query audit over batches', () => {
    const D2 = '0190f000-0000-7000-8000-0000000000d2'
    const base = Date.parse('2026-03-01T10:00:00Z')
    const STATUSES = ['success', 'error', 'denied'] as const
    type Written = { q: string; at: number; user: string; ds: string; status: string }
    const written: Written[] = []
    let store: Store

    /**
     * Entries in small batches of three writers: two whose batches interleave in time, and one
     * whose single batch spans all the others (its first entry the oldest, its last the newest).
     * Two entries share one millisecond in different batches.
     */
    beforeAll(async () => {
      store = await makeStore()
      const writers = [0, 1, 2].map(() => new QueryAuditWriter(store.db, { batchSize: 3 }))
      const add = (writer: QueryAuditWriter, k: number, at: number) => {
        const entry = {
          q: `SELECT ${k}`,
          at,
          user: k % 3 === 0 ? U2 : U1,
          ds: k % 4 === 0 ? D2 : D1,
          status: STATUSES[(k % 5) % 3] as string,
        }
        written.push(entry)
        writer.write({
          user_id: entry.user,
          username: entry.user === U1 ? 'one' : 'two',
          data_source_id: entry.ds,
          datasource_name: entry.ds === D1 ? 'shop' : 'books',
          original_query: entry.q,
          status: entry.status as 'success',
          created_at: new Date(at),
        })
      }
      for (let k = 0; k < 40; k++) add(writers[k % 2] as QueryAuditWriter, k, base + k * 1000)
      const wide = writers[2] as QueryAuditWriter
      add(wide, 40, base - 100_000)
      add(wide, 41, base + 5000)
      add(wide, 42, base + 100_000)
      for (const w of writers) await w.close()
    })
    afterAll(() => store.close())

    /** Every page of a list, concatenated, checking `total` on each. */
    async function listAll(filter: QueryAuditFilter, pageSize: number) {
      const rows = []
      for (let page = 1; ; page++) {
        const result = await store.audit.queries.list({ ...filter, page, page_size: pageSize })
        rows.push(...result.data)
        if (result.data.length < pageSize) return { rows, total: result.total }
      }
    }

    async function exportAll(filter: QueryAuditFilter) {
      const rows = []
      for await (const row of store.audit.queries.export(filter)) rows.push(row)
      return rows
    }

    const byTimeThenId = (a: { created_at: string; id: string }, b: typeof a) =>
      a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1

    it('stores the entries in many batches', async () => {
      const [row] = await rowsOf<{ n: number }>(
        store.db.execute(sql`SELECT count(*)::int AS n FROM query_audit_chunks`),
      )
      expect(row?.n).toBe(15)
    })

    it('exports oldest first and lists newest first across overlapping batches', async () => {
      const exported = await exportAll({})
      expect(exported).toHaveLength(43)
      expect([...exported].sort(byTimeThenId).map((r) => r.id)).toEqual(exported.map((r) => r.id))
      expect(exported.map((r) => r.original_query).sort()).toEqual(written.map((w) => w.q).sort())
      expect([exported[0]?.original_query, exported.at(-1)?.original_query]).toEqual([
        'SELECT 40',
        'SELECT 42',
      ])
      // SELECT 5 and SELECT 41 share their millisecond: the id decides.
      const tie = exported.filter((r) => r.created_at === new Date(base + 5000).toISOString())
      expect(tie.map((r) => r.original_query).sort()).toEqual(['SELECT 41', 'SELECT 5'])
      const newest = [...exported].reverse()
      for (const size of [1, 4, 7, 50]) {
        const { rows, total } = await listAll({}, size)
        expect(total).toBe(43)
        expect(rows.map((r) => r.id)).toEqual(newest.map((r) => r.id))
      }
      const page = await store.audit.queries.list({ page: 3, page_size: 5 })
      expect(page.data.map((r) => r.id)).toEqual(newest.slice(10, 15).map((r) => r.id))
      expect((await store.audit.queries.list({ page: 10, page_size: 5 })).data).toEqual([])
      const [row] = exported
      expect(row).toMatchObject({
        original_query: 'SELECT 40',
        username: 'one',
        datasource_name: 'books',
        status: 'success',
        rewritten_query: null,
        policies_applied: '[]',
        execution_time_ms: null,
        client_info: null,
        error_message: null,
        shadow_policies: null,
        shadow_denied: null,
        chain_id: null,
        chain_seq: null,
        prev_hash: null,
        hash: null,
      })
    })

    it('filters by user, datasource, status and time across batches, totals included', async () => {
      const iso = (ms: number) => new Date(ms).toISOString()
      const filters: [QueryAuditFilter, (w: Written) => boolean][] = [
        [{ user_id: U1 }, (w) => w.user === U1],
        [{ user_id: U2, status: 'error' }, (w) => w.user === U2 && w.status === 'error'],
        [{ datasource_id: D2 }, (w) => w.ds === D2],
        [{ status: 'denied' }, (w) => w.status === 'denied'],
        [
          { from: iso(base + 5000), to: iso(base + 30_000) },
          (w) => w.at >= base + 5000 && w.at <= base + 30_000,
        ],
        [{ since: iso(base + 10_000), user_id: U1 }, (w) => w.at >= base + 10_000 && w.user === U1],
        [{ until: iso(base + 20_500) }, (w) => w.at <= base + 20_500],
        [
          { from: '2026-03-01T09:00:00Z', to: '2026-03-01T10:59:59.999Z', datasource_id: D1 },
          (w) => w.ds === D1,
        ],
        [{ from: iso(base + 100_000) }, (w) => w.at === base + 100_000],
        [{ to: iso(base - 100_000) }, (w) => w.at === base - 100_000],
        [{ from: iso(base + 100_001) }, () => false],
        [
          { user_id: U2, datasource_id: D2, status: 'success', to: iso(base + 35_000) },
          (w) => w.user === U2 && w.ds === D2 && w.status === 'success' && w.at <= base + 35_000,
        ],
      ]
      const all = await exportAll({})
      const byQuery = new Map(written.map((w) => [w.q, w]))
      for (const [filter, keep] of filters) {
        const expected = all.filter((r) => keep(byQuery.get(r.original_query) as Written))
        const exported = await exportAll(filter)
        expect(
          exported.map((r) => r.id),
          JSON.stringify(filter),
        ).toEqual(expected.map((r) => r.id))
        const { rows, total } = await listAll(filter, 3)
        expect(total, JSON.stringify(filter)).toBe(expected.length)
        expect(
          rows.map((r) => r.id),
          JSON.stringify(filter),
        ).toEqual([...expected].reverse().map((r) => r.id))
      }
    })
  })

  describe('audit hash chains', () => {
    /**
     * A store with a few linked entries in both logs: five admin entries, and five query-audit
     * entries (`SELECT 0` … `SELECT 4`) in three batches of its chain: 1-2, 3-4 and 5.
     */
    async function chainedStore() {
      const store = await makeStore()
      const admin = await bootstrapAdmin(store)
      const users = []
      for (let i = 0; i < 4; i++) {
        users.push(
          await store.users.create({ username: unique('c'), password: PASSWORD }, admin.id),
        )
      }
      for (let i = 0; i < 5; i++) {
        store.audit.queries.write({
          user_id: i === 2 ? U2 : U1,
          username: i === 2 ? 'two' : 'one',
          data_source_id: D1,
          datasource_name: 'shop',
          original_query: `SELECT ${i}`,
          status: 'success',
        })
        if (i % 2 === 1) await store.audit.queries.flush()
      }
      await store.audit.queries.flush()
      return { store, users }
    }

    /** Runs `statement` with the append-only triggers off, as someone with the database would. */
    async function tamper(store: Store, table: string, statement: string) {
      await store.db.execute(sql.raw(`ALTER TABLE ${table} DISABLE TRIGGER USER`))
      await store.db.execute(sql.raw(statement))
      await store.db.execute(sql.raw(`ALTER TABLE ${table} ENABLE TRIGGER USER`))
    }

    async function entryIds(store: Store, table: string): Promise<string[]> {
      const rows = await rowsOf<{ id: string }>(
        store.db.execute(
          sql.raw(
            `SELECT id FROM ${table} WHERE chain_id IS NOT NULL ORDER BY chain_id, chain_seq`,
          ),
        ),
      )
      return rows.map((r) => r.id)
    }

    /** The linked batches of the query audit as stored, in chain order. */
    async function chunks(store: Store): Promise<ChunkRow[]> {
      const rows = await rowsOf<{ j: string }>(
        store.db.execute(
          sql`SELECT row_to_json(c)::text AS j FROM query_audit_chunks c
            WHERE chain_id IS NOT NULL ORDER BY chain_id, first_seq, id`,
        ),
      )
      return rows.map((r) => JSON.parse(r.j) as ChunkRow)
    }

    /** The ids of a stored batch's entries (format 3 derives them from the batch). */
    const idsOf = (row: ChunkRow | undefined) => decodeChunk(row as ChunkRow).e_id

    /**
     * Stores a batch row as given (inserting needs no trigger off: the log is append-only);
     * resolves to its entry ids as a reader sees them.
     */
    async function insertChunk(store: Store, row: ChunkRow): Promise<string[]> {
      await store.db.execute(
        sql`INSERT INTO query_audit_chunks
          SELECT * FROM json_populate_record(NULL::query_audit_chunks, ${JSON.stringify(row)}::json)`,
      )
      return idsOf(row)
    }

    async function exportAll(store: Store, filter = {}) {
      const rows = []
      for await (const row of store.audit.queries.export(filter)) rows.push(row)
      return rows
    }

    it('links every entry of both logs, and verify finds them whole', async () => {
      const { store } = await chainedStore()
      try {
        const result = await store.audit.verify()
        expect(result.ok).toBe(true)
        expect(result.first_broken).toBeNull()
        const byLog = Object.fromEntries(result.logs.map((l) => [l.log, l]))
        expect(byLog['admin']).toMatchObject({ entries: 5, chains: 1, unchained: 0 })
        expect(byLog['queries']).toMatchObject({ entries: 5, chains: 1, unchained: 0 })
        expect((await chunks(store)).map((c) => [c.format, c.first_seq, c.entries])).toEqual([
          [3, 1, 2],
          [3, 3, 2],
          [3, 5, 1],
        ])
        const exported = await exportAll(store)
        expect(exported.map((r) => r.original_query)).toEqual([
          'SELECT 0',
          'SELECT 1',
          'SELECT 2',
          'SELECT 3',
          'SELECT 4',
        ])
        expect(exported.map((r) => r.chain_seq)).toEqual([1, 2, 3, 4, 5])
        // Each entry names the one before it, across the batches' boundaries too.
        expect(exported[0]?.prev_hash).toBe('')
        for (let i = 1; i < exported.length; i++) {
          expect(exported[i]?.prev_hash).toBe(exported[i - 1]?.hash)
          expect(exported[i]?.hash).toMatch(/^[0-9a-f]{64}$/)
        }
        // A filtered export keeps the links of the whole chain.
        const second = await exportAll(store, { user_id: U2 })
        expect(second.map((r) => [r.original_query, r.chain_seq])).toEqual([['SELECT 2', 3]])
        expect(second[0]?.prev_hash).toBe(exported[1]?.hash)
        expect(second[0]?.hash).toBe(exported[2]?.hash)
      } finally {
        await store.close()
      }
    })

    it('stores a templated statement once and reads it back filled with its literals', async () => {
      const { store } = await chainedStore()
      try {
        const originalSql = 'SELECT * FROM t WHERE id = $1'
        const rewritten =
          "SELECT * FROM (SELECT * FROM public.t WHERE t.tenant = 'acme') t WHERE id = $1"
        for (const literal of ['42', "'x''y'"]) {
          store.audit.queries.write({
            ...minimalRecord(originalSql.replace('$1', literal)),
            rewritten_query: rewritten.replace('$1', literal),
            template: { originalSql, sql: rewritten, literals: [literal] },
          })
        }
        await store.audit.queries.flush()
        const page = await store.audit.queries.list({ page_size: 2 })
        expect(page.data.map((r) => [r.original_query, r.rewritten_query])).toEqual([
          [
            "SELECT * FROM t WHERE id = 'x''y'",
            "SELECT * FROM (SELECT * FROM public.t WHERE t.tenant = 'acme') t WHERE id = 'x''y'",
          ],
          [
            'SELECT * FROM t WHERE id = 42',
            "SELECT * FROM (SELECT * FROM public.t WHERE t.tenant = 'acme') t WHERE id = 42",
          ],
        ])
        const [stored] = await rowsOf<{ templates: number; filled: number }>(
          store.db.execute(sql`SELECT
            (SELECT count(*)::int FROM query_audit_texts WHERE body = ${originalSql}) AS templates,
            (SELECT count(*)::int FROM query_audit_texts WHERE body LIKE 'SELECT * FROM t WHERE id = 4%') AS filled`),
        )
        expect(stored).toEqual({ templates: 1, filled: 0 })
        const exported = await exportAll(store)
        expect(exported.at(-2)?.original_query).toBe('SELECT * FROM t WHERE id = 42')
        expect(exported.at(-1)?.prev_hash).toBe(exported.at(-2)?.hash)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('reads and verifies batches of format 2 (entry arrays, as earlier versions wrote them)', async () => {
      const { store } = await chainedStore()
      try {
        const before = await exportAll(store)
        const key = store.context.secrets.derive(CHAIN_KEY_PURPOSE)
        const stored = await chunks(store)
        for (const row of stored) {
          // The same batch as the previous version stored it: arrays, no packed columns.
          const old: ChunkRow = {
            ...decodeChunk(row),
            format: 2,
            p_counts: null,
            e_data: null,
            e_literals: null,
          }
          old.hash = sealChunk(key, old)
          await tamper(
            store,
            'query_audit_chunks',
            `DELETE FROM query_audit_chunks WHERE id = '${row.id}'`,
          )
          await insertChunk(store, old)
        }
        expect((await chunks(store)).map((c) => c.format)).toEqual([2, 2, 2])
        expect(await exportAll(store)).toEqual(before)
        expect((await store.audit.verify()).first_broken).toBeNull()
        expect((await store.audit.queries.list({ status: 'success' })).total).toBe(before.length)
      } finally {
        await store.close()
      }
    })

    it('reports a changed batch at its first entry, naming the entries it holds', async () => {
      const { store } = await chainedStore()
      try {
        const second = (await chunks(store))[1] as ChunkRow
        // Someone who knows the format marks the batch's second entry denied.
        const entries = unpackEntries(byteaBytes(second.e_data) as Buffer, second.entries)
        entries.status[1] = 2
        await tamper(
          store,
          'query_audit_chunks',
          `UPDATE query_audit_chunks SET e_data = '${byteaText(packEntries(entries))}'::bytea,
            status_mask = status_mask | 4 WHERE id = '${second.id}'`,
        )
        const denied = await store.audit.queries.list({ status: 'denied' })
        expect(denied.data.map((r) => r.original_query)).toEqual(['SELECT 3'])
        const result = await store.audit.verify()
        expect(result.ok).toBe(false)
        expect(result.first_broken).toMatchObject({
          log: 'queries',
          chain_id: second.chain_id,
          chain_seq: 3,
          entry_id: idsOf(second)[0],
        })
        expect(result.first_broken?.reason).toMatch(/entries 3 to 4 .*changed after it was written/)
      } finally {
        await store.close()
      }
    })

    it('reports a changed or deleted statement text at the first entry that refers to it', async () => {
      const { store } = await chainedStore()
      try {
        const [, second] = (await chunks(store)) as ChunkRow[]
        await tamper(
          store,
          'query_audit_texts',
          `UPDATE query_audit_texts SET body = 'SELECT 42' WHERE digest = palisade_text_digest('SELECT 3')`,
        )
        const changed = await store.audit.verify()
        expect(changed.first_broken).toMatchObject({
          log: 'queries',
          chain_seq: 4,
          entry_id: idsOf(second)[1],
        })
        expect(changed.first_broken?.reason).toMatch(
          /statement text was changed after it was written/,
        )
        const [first] = (await chunks(store)) as ChunkRow[]
        await tamper(
          store,
          'query_audit_texts',
          `DELETE FROM query_audit_texts WHERE digest = palisade_text_digest('SELECT 1')`,
        )
        const deleted = await store.audit.verify()
        expect(deleted.first_broken).toMatchObject({ chain_seq: 2, entry_id: idsOf(first)[1] })
        expect(deleted.first_broken?.reason).toMatch(/statement text is missing/)
      } finally {
        await store.close()
      }
    })

    it('reports a deleted batch at the entry after the gap', async () => {
      const { store } = await chainedStore()
      try {
        const [, second, third] = (await chunks(store)) as ChunkRow[]
        await tamper(
          store,
          'query_audit_chunks',
          `DELETE FROM query_audit_chunks WHERE id = '${second?.id}'`,
        )
        const result = await store.audit.verify()
        expect(result.ok).toBe(false)
        expect(result.first_broken).toMatchObject({
          log: 'queries',
          chain_seq: 5,
          entry_id: idsOf(third)[0],
        })
        expect(result.first_broken?.reason).toMatch(/entries 3 to 4 of this chain are missing/)
        expect(result.logs.find((l) => l.log === 'queries')?.entries).toBe(3)
      } finally {
        await store.close()
      }
    })

    it('reports forged batches: a sealed one without the key, a repeated one, an unlinked one', async () => {
      const { store } = await chainedStore()
      try {
        const [, second, third] = (await chunks(store)) as ChunkRow[]
        const last = (await exportAll(store)).at(-1)
        const at = (third?.first_at ?? 0) + 1000
        // It follows the chain's last entry, but its seal cannot be made without the key.
        const [forgedId] = await insertChunk(store, {
          ...(third as ChunkRow),
          id: '0190f000-0000-7000-8000-00000000fff0',
          first_seq: 6,
          prev_hash: last?.hash ?? '',
          hash: 'f'.repeat(64),
          first_at: at,
          last_at: at,
        })
        const sealed = await store.audit.verify()
        expect(sealed.first_broken).toMatchObject({
          log: 'queries',
          chain_seq: 6,
          entry_id: forgedId,
        })
        expect(sealed.first_broken?.reason).toMatch(/entries 6 to 6 .*changed after it was written/)
        // A copy of a batch under another id: its entries appear twice in the chain.
        await insertChunk(store, {
          ...(second as ChunkRow),
          id: 'ffffffff-0000-7000-8000-00000000fff2',
        })
        const repeated = await store.audit.verify()
        expect(repeated.first_broken).toMatchObject({ log: 'queries', chain_seq: 3 })
        expect(repeated.first_broken?.reason).toMatch(/entry 3 appears more than once/)
        // A batch without a chain, younger than the chain: not written by Palisade.
        const [unlinkedId] = await insertChunk(store, {
          ...(third as ChunkRow),
          id: '0190f000-0000-7000-8000-00000000fff4',
          chain_id: null,
          first_seq: null,
          prev_hash: null,
          hash: null,
        })
        const unlinked = await store.audit.verify()
        expect(unlinked.first_broken).toMatchObject({
          log: 'queries',
          chain_id: null,
          entry_id: unlinkedId,
        })
        expect(unlinked.first_broken?.reason).toMatch(/no chain link/)
        expect(unlinked.logs.find((l) => l.log === 'queries')?.unchained).toBe(1)
      } finally {
        await store.close()
      }
    })

    it('starts a chain after its retention checkpoint, and only there', async () => {
      /** Removes the chain's first batch (entries 1-2) behind a checkpoint naming `hash`. */
      const shorten = async (
        store: Store,
        hash: (exported: { hash: string | null }[]) => string,
      ) => {
        const key = store.context.secrets.derive(CHAIN_KEY_PURPOSE)
        const [first, second] = (await chunks(store)) as ChunkRow[]
        const row = {
          id: '0190f000-0000-7000-8000-00000000ccc1',
          createdAt: Date.now(),
          cutoff: (first?.last_at ?? 0) + 1,
          positions: JSON.stringify([
            { chain_id: first?.chain_id, seq: 2, hash: hash(await exportAll(store)) },
          ]),
          removedChunks: 1,
          removedEntries: 2,
        }
        await store.db
          .insert(queryAuditCheckpoints)
          .values({ ...row, signature: signCheckpoint(key, row) })
        await tamper(
          store,
          'query_audit_chunks',
          `DELETE FROM query_audit_chunks WHERE id = '${first?.id}'`,
        )
        return second as ChunkRow
      }
      const { store } = await chainedStore()
      try {
        await shorten(store, (exported) => exported[1]?.hash ?? '')
        const resumed = await store.audit.verify()
        expect(resumed.first_broken).toBeNull()
        expect(resumed.logs.find((l) => l.log === 'queries')?.entries).toBe(3)
      } finally {
        await store.close()
      }
      // A checkpoint that does not name the removed entry's hash does not hide the gap.
      const other = await chainedStore()
      try {
        const second = await shorten(other.store, () => 'e'.repeat(64))
        const wrong = await other.store.audit.verify()
        expect(wrong.first_broken).toMatchObject({
          log: 'queries',
          chain_seq: 3,
          entry_id: idsOf(second)[0],
        })
        expect(wrong.first_broken?.reason).toMatch(/does not follow/)
      } finally {
        await other.store.close()
      }
    })

    it('reports a deleted admin-audit entry at the entry after the gap', async () => {
      const { store } = await chainedStore()
      try {
        const [, second, third] = await entryIds(store, 'admin_audit_log')
        await tamper(store, 'admin_audit_log', `DELETE FROM admin_audit_log WHERE id = '${second}'`)
        const result = await store.audit.verify()
        expect(result.ok).toBe(false)
        expect(result.first_broken).toMatchObject({ log: 'admin', entry_id: third, chain_seq: 3 })
        expect(result.first_broken?.reason).toMatch(/entries 2 to 2 .* missing/)
      } finally {
        await store.close()
      }
    })

    it('reports a rewritten admin hash chain', async () => {
      const { store } = await chainedStore()
      try {
        const [first] = await entryIds(store, 'admin_audit_log')
        // Recomputing a plain SHA-256 over the changed content does not help: the link is keyed.
        await tamper(
          store,
          'admin_audit_log',
          `UPDATE admin_audit_log SET changes = '{}', hash = encode(sha256('x'::bytea), 'hex') WHERE id = '${first}'`,
        )
        const changed = await store.audit.verify()
        expect(changed.first_broken).toMatchObject({ log: 'admin', entry_id: first })
      } finally {
        await store.close()
      }
    })
  })
}

/** Read-only or non-admin-mutation methods; everything else on a service must be audited. */
const READ_ONLY = new Set([
  'constructor',
  'get',
  'list',
  'findByUsername',
  'findByName',
  'getUserForAuth',
  'verifyPassword',
  'checkPassword',
  'recordLogin',
  'types',
  'getConnection',
  'impact',
  'ofUser',
  'effectiveMembers',
  'listUsers',
  'listRoles',
  'exposed',
  'page',
  'outline',
  'getVersion',
  'validateExpression',
  'listAnchors',
  'proposals',
  'effectiveLimits',
])

function mutatingMethodNames(store: Store): string[] {
  const services = {
    users: store.users,
    roles: store.roles,
    datasources: store.datasources,
    access: store.access,
    catalog: store.catalog,
    policies: store.policies,
    assignments: store.assignments,
    attributes: store.attributes,
    decisionFunctions: store.decisionFunctions,
    relationships: store.relationships,
    accessRequests: store.accessRequests,
    catalogTags: store.catalogTags,
  }
  return Object.entries(services).flatMap(([name, service]) =>
    Object.getOwnPropertyNames(Object.getPrototypeOf(service))
      .filter((m) => !READ_ONLY.has(m))
      .map((m) => `${name}.${m}`),
  )
}

/** Calls every mutating method once, checking each one added audit entries. */
async function walkEveryMutation(store: Store, admin: User): Promise<string[]> {
  const covered: string[] = []
  const step = async (name: string, fn: () => Promise<unknown>) => {
    const before = await store.audit.admin.count()
    await fn()
    const after = await store.audit.admin.count()
    if (after <= before) throw new Error(`${name} committed without an audit entry`)
    covered.push(name)
  }
  const a = admin.id
  let user!: User
  await step('users.create', async () => {
    user = await store.users.create({ username: unique('walk'), password: PASSWORD }, a)
  })
  await step('users.update', () => store.users.update(user.id, { display_name: 'W' }, a))
  await step('users.setPassword', () =>
    store.users.setPassword(user.id, { password: 'Other-Pass-1' }, a),
  )
  let role!: { id: string }
  let parent!: { id: string }
  await step('roles.create', async () => {
    role = await store.roles.create({ name: unique('walk') }, a)
    parent = await store.roles.create({ name: unique('walkp') }, a)
  })
  await step('roles.update', () => store.roles.update(role.id, { description: 'd' }, a))
  await step('roles.addMembers', () => store.roles.addMembers(role.id, { user_ids: [user.id] }, a))
  await step('roles.removeMember', () => store.roles.removeMember(role.id, user.id, a))
  await step('roles.putMember', () =>
    store.roles.putMember(role.id, user.id, { valid_until: '2999-01-01T00:00:00Z' }, a),
  )
  await step('roles.addParent', () =>
    store.roles.addParent(role.id, { parent_role_id: parent.id }, a),
  )
  await step('roles.removeParent', () => store.roles.removeParent(role.id, parent.id, a))
  let ds!: { id: string }
  await step('datasources.create', async () => {
    ds = await store.datasources.create({ name: unique('walk'), ds_type: 'pglite', config: {} }, a)
  })
  await step('datasources.update', () => store.datasources.update(ds.id, { pool_size: 2 }, a))
  await step('access.setUsers', () => store.access.setUsers(ds.id, { user_ids: [user.id] }, a))
  await step('access.setRoles', () => store.access.setRoles(ds.id, { role_ids: [role.id] }, a))
  await step('access.setAll', () => store.access.setAll(ds.id, { enabled: true }, a))
  await step('access.grant', () =>
    store.access.grant(ds.id, { scope: 'role', id: parent.id }, { valid_from: null }, a),
  )
  await step('access.revoke', () => store.access.revoke(ds.id, { scope: 'role', id: parent.id }, a))
  const requests = store.accessRequests
  const ask = () =>
    requests.create(user.id, { role_id: parent.id, duration_seconds: 60, reason: 'walk' })
  await step('accessRequests.create', () => ask().then((r) => requests.cancel(r.id, user.id)))
  await step('accessRequests.cancel', () => ask().then((r) => requests.cancel(r.id, user.id)))
  await step('accessRequests.deny', () => ask().then((r) => requests.deny(r.id, {}, a)))
  await step('accessRequests.approve', () => ask().then((r) => requests.approve(r.id, {}, a)))
  const columns = [
    { column_name: 'id', ordinal_position: 1, data_type: 'integer', is_nullable: false },
    { column_name: 'pid', ordinal_position: 2, data_type: 'integer', is_nullable: true },
  ]
  await step('catalog.saveCatalog', () =>
    store.catalog.saveCatalog(
      ds.id,
      [
        {
          schema_name: 'public',
          is_selected: true,
          tables: [
            { table_name: 'a', is_selected: true, columns },
            { table_name: 'b', is_selected: true, columns },
          ],
        },
      ],
      a,
    ),
  )
  await step('catalog.syncCatalog', () =>
    store.catalog.syncCatalog(
      ds.id,
      {
        schemas: ['public'],
        tables: ['a', 'b'].map((t) => ({
          schema_name: 'public',
          table_name: t,
          table_type: 'TABLE',
        })),
        column_tables: [{ schema_name: 'public', table_name: 'a' }],
        columns: columns.map((c) => ({
          ...c,
          schema_name: 'public',
          table_name: 'a',
          column_default: null,
        })),
      },
      a,
    ),
  )
  await step('catalogTags.set', () =>
    store.catalogTags.set(
      ds.id,
      { schema_name: 'public', table_name: 'a', column_name: 'pid', tags: ['pii'] },
      a,
    ),
  )
  await step('catalogTags.add', () =>
    store.catalogTags.add(
      ds.id,
      { schema_name: 'public', table_name: 'a', column_name: 'pid', tags: ['pii.extra'] },
      a,
    ),
  )
  await step('catalogTags.remove', () =>
    store.catalogTags.remove(
      ds.id,
      { schema_name: 'public', table_name: 'a', column_name: 'pid', tags: ['pii.extra'] },
      a,
    ),
  )
  let proposalId = ''
  await step('catalogTags.propose', async () => {
    const [p] = await store.catalogTags.propose(
      ds.id,
      [
        {
          schema_name: 'public',
          table_name: 'a',
          column_name: 'id',
          tag: 'pii.ssn',
          confidence: 0.9,
          evidence: 'values',
        },
      ],
      a,
    )
    proposalId = p?.id ?? ''
  })
  await step('catalogTags.decide', () => store.catalogTags.decide(ds.id, proposalId, 'reject', a))
  const tables = (await store.catalog.get(ds.id)).schemas[0]?.tables ?? []
  let rel!: { id: string }
  await step('relationships.create', async () => {
    rel = await store.relationships.create(
      ds.id,
      {
        child_table_id: tables[0]?.id as string,
        child_column_name: 'pid',
        parent_table_id: tables[1]?.id as string,
        parent_column_name: 'id',
      },
      a,
    )
  })
  let anchor!: { id: string }
  await step('relationships.createAnchor', async () => {
    anchor = await store.relationships.createAnchor(
      ds.id,
      {
        child_table_id: tables[0]?.id as string,
        resolved_column_name: 't',
        relationship_id: rel.id,
      },
      a,
    )
  })
  await step('relationships.deleteAnchor', () =>
    store.relationships.deleteAnchor(ds.id, anchor.id, a),
  )
  await step('relationships.delete', () => store.relationships.delete(ds.id, rel.id, a))
  let def!: { id: string }
  await step('attributes.create', async () => {
    def = await store.attributes.create(
      { key: unique('k'), entity_type: 'user', value_type: 'string' },
      a,
    )
  })
  await step('attributes.update', () => store.attributes.update(def.id, { description: 'd' }, a))
  await step('attributes.delete', () => store.attributes.delete(def.id, {}, a))
  let fn!: { id: string }
  await step('decisionFunctions.create', async () => {
    fn = await store.decisionFunctions.create(
      {
        name: unique('fn'),
        decision_fn: 'function evaluate() { return { fire: true } }',
        evaluate_context: 'session',
      },
      a,
    )
  })
  await step('decisionFunctions.update', () =>
    store.decisionFunctions.update(fn.id, { version: 1, log_level: 'info' }, a),
  )
  await step('decisionFunctions.delete', () => store.decisionFunctions.delete(fn.id, a))
  let policy!: { id: string }
  await step('policies.create', async () => {
    policy = await store.policies.create(
      {
        name: unique('p'),
        policy_type: 'table_deny',
        targets: [{ schemas: ['*'], tables: ['a'] }],
      },
      a,
    )
  })
  await step('policies.update', () =>
    store.policies.update(policy.id, { version: 1, description: 'd' }, a),
  )
  let assignment!: { id: string }
  await step('assignments.assign', async () => {
    assignment = await store.assignments.assign(ds.id, { policy_id: policy.id }, a)
  })
  await step('assignments.unassign', () => store.assignments.unassign(ds.id, assignment.id, a))
  await step('policies.delete', () => store.policies.delete(policy.id, a))
  await step('roles.delete', () => store.roles.delete(role.id, a))
  await step('datasources.delete', () => store.datasources.delete(ds.id, a))
  await step('users.delete', () => store.users.delete(user.id, a))
  return covered
}
