import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { CHAIN_KEY_PURPOSE, canonicalQueryEntry, chainHash } from '../../src/audit/audit-chain.js'
import { verifyCheckpointSignatures } from '../../src/audit/audit-checkpoints.js'
import { type ChunkRow, entryAt, textDigest } from '../../src/audit/audit-chunk-format.js'
import {
  QueryAuditRetention,
  type QueryAuditRetentionEvent,
} from '../../src/audit/audit-retention.js'
import { type Store, SYSTEM_ACTOR_ID } from '../../src/index.js'
import { rowsOf } from '../../src/kernel/db.js'
import { bootstrapAdmin } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const U1 = '0190f000-0000-7000-8000-0000000000b1'
const D1 = '0190f000-0000-7000-8000-0000000000e1'
const DAY = 86_400_000
const HOUR = 3_600_000

/** Writes one batch (one flush) of entries at the given times. */
async function batch(store: Store, label: string, times: readonly number[]): Promise<void> {
  times.forEach((at, i) => {
    store.audit.queries.write({
      user_id: U1,
      username: 'ret',
      data_source_id: D1,
      datasource_name: 'shop',
      original_query: `SELECT ${label} ${i}`,
      // Shared by every batch: it must outlive the batches retention removes.
      rewritten_query: 'SELECT shared',
      status: i % 2 ? 'success' : 'denied',
      created_at: new Date(at),
    })
  })
  await store.audit.queries.flush()
}

/** Runs `statement` with the append-only triggers off, as someone with the database would. */
async function tamper(store: Store, table: string, statement: string): Promise<void> {
  await store.db.execute(sql.raw(`ALTER TABLE ${table} DISABLE TRIGGER USER`))
  try {
    await store.db.execute(sql.raw(statement))
  } finally {
    await store.db.execute(sql.raw(`ALTER TABLE ${table} ENABLE TRIGGER USER`))
  }
}

/** Every query-audit entry, oldest first. */
async function exported(store: Store): Promise<string[]> {
  const out: string[] = []
  for await (const row of store.audit.queries.export()) out.push(row.original_query)
  return out
}

async function scalar(store: Store, query: string): Promise<number> {
  const [row] = await rowsOf<{ n: unknown }>(store.db.execute(sql.raw(query)))
  return Number(row?.n)
}

/** The error a statement fails with, or null when it succeeds. */
async function failure(run: () => Promise<unknown>): Promise<string | null> {
  try {
    await run()
    return null
  } catch (error) {
    let e: unknown = error
    while (e && !(e as { message?: string }).message?.includes('append-only')) {
      e = (e as { cause?: unknown }).cause
    }
    return ((e ?? error) as Error).message
  }
}

/** Query-audit retention (docs/audit.md#retention), with a clock the test moves. */
export function auditRetentionCases(makeStore: MakeStore): void {
  describe('query audit retention', () => {
    const NOW = Date.parse('2026-06-01T12:00:00Z')

    /** A store keeping 30 days, its clock at NOW + `shift`, with old, straddling and new batches. */
    async function retentionStore(events: QueryAuditRetentionEvent[] = []) {
      const clock = { now: NOW }
      const store = await makeStore({
        queryAuditRetentionDays: 30,
        clock: () => clock.now,
        onQueryAuditRetention: (e) => events.push(e),
      })
      await bootstrapAdmin(store)
      // One chain: 5 entries 40 days old, 3 entries 35 days old, a batch straddling the cutoff
      // (30 days), 4 recent entries.
      await batch(
        store,
        'old-a',
        [0, 1, 2, 3, 4].map((i) => NOW - 40 * DAY + i * 60_000),
      )
      await batch(
        store,
        'old-b',
        [0, 1, 2].map((i) => NOW - 35 * DAY + i * 60_000),
      )
      await batch(store, 'edge', [NOW - 30 * DAY - HOUR, NOW - 29 * DAY])
      await batch(
        store,
        'new',
        [0, 1, 2, 3].map((i) => NOW - DAY + i * 60_000),
      )
      return { store, clock }
    }

    it('removes whole old batches behind a checkpoint, audited, and verify holds across the gap', async () => {
      const events: QueryAuditRetentionEvent[] = []
      const { store } = await retentionStore(events)
      try {
        expect(store.auditRetention.days).toBe(30)
        const before = await store.audit.queries.list({ page_size: 200 })
        expect(before.total).toBe(14)
        let chain: string | null = null
        for await (const row of store.audit.queries.export()) chain ??= row.chain_id
        const removal = await store.auditRetention.sweep()
        expect(removal).toMatchObject({
          cutoff: new Date(NOW - 30 * DAY).toISOString(),
          removed_batches: 2,
          removed_entries: 8,
          breaks: [],
        })
        expect(removal?.positions).toEqual([{ chain_id: chain, seq: 8, hash: expect.any(String) }])
        // Lists, totals, exports and the timeline hold only what is left.
        const after = await store.audit.queries.list({ page_size: 200 })
        expect(after.total).toBe(6)
        expect(after.data.map((r) => r.original_query).sort()).toEqual([
          'SELECT edge 0',
          'SELECT edge 1',
          'SELECT new 0',
          'SELECT new 1',
          'SELECT new 2',
          'SELECT new 3',
        ])
        expect(await exported(store)).toEqual([
          'SELECT edge 0',
          'SELECT edge 1',
          'SELECT new 0',
          'SELECT new 1',
          'SELECT new 2',
          'SELECT new 3',
        ])
        const oldWindow = { from: new Date(NOW - 41 * DAY), to: new Date(NOW - 34 * DAY) }
        expect((await store.audit.queries.list(oldWindow)).total).toBe(0)
        expect((await store.audit.queries.list({ status: 'denied' })).total).toBe(3)
        const timeline = await store.audit.queries.timeline(oldWindow)
        expect(timeline.buckets.some((b) => b.success + b.error + b.denied > 0)).toBe(false)
        expect(await scalar(store, 'SELECT coalesce(sum(n), 0) AS n FROM query_audit_counts')).toBe(
          6,
        )
        // Texts only the removed entries used are gone; shared ones stay.
        expect(
          await scalar(
            store,
            `SELECT count(*) AS n FROM query_audit_texts WHERE body LIKE 'SELECT old%'`,
          ),
        ).toBe(0)
        expect(
          await scalar(
            store,
            `SELECT count(*) AS n FROM query_audit_texts WHERE body = 'SELECT shared'`,
          ),
        ).toBe(1)
        const verified = await store.audit.verify()
        expect(verified.first_broken).toBeNull()
        expect(verified.ok).toBe(true)
        expect(verified.logs.find((l) => l.log === 'queries')).toMatchObject({
          entries: 6,
          chains: 1,
        })
        // The removal is in the admin audit, by the system actor, in the same transaction.
        const entries = await store.audit.admin.list({ resource_type: 'query_audit' })
        expect(entries.total).toBe(1)
        expect(entries.data[0]).toMatchObject({
          resource_id: removal?.checkpoint_id,
          action: 'delete',
          actor_id: SYSTEM_ACTOR_ID,
        })
        expect(JSON.parse(entries.data[0]?.changes as string)).toMatchObject({
          reason: 'retention',
          retention_days: 30,
          cutoff: removal?.cutoff,
          removed_batches: 2,
          removed_entries: 8,
          chains: 1,
        })
        // Nothing more is old enough: nothing is written.
        expect(await store.auditRetention.sweep()).toBeNull()
        expect((await store.audit.admin.list({ resource_type: 'query_audit' })).total).toBe(1)
        expect(events).toEqual([])
      } finally {
        await store.close()
      }
    })

    it('moves on with the clock: a batch that straddled the cutoff goes once it is all older', async () => {
      const { store, clock } = await retentionStore()
      try {
        await store.auditRetention.sweep()
        clock.now += DAY
        // Still straddling: its last entry is 29 days old at the first sweep, 30 days now.
        expect(await store.auditRetention.sweep()).toBeNull()
        clock.now += DAY
        const removal = await store.auditRetention.sweep()
        expect(removal).toMatchObject({ removed_batches: 1, removed_entries: 2 })
        expect(removal?.positions.map((p) => p.seq)).toEqual([10])
        expect((await store.audit.queries.list()).total).toBe(4)
        const verified = await store.audit.verify()
        expect(verified.first_broken).toBeNull()
        expect((await store.audit.admin.list({ resource_type: 'query_audit' })).total).toBe(2)
        // New entries keep linking on from the removed ones.
        await batch(store, 'later', [NOW])
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('sweeps by itself at start and every interval, counting back from its clock', async () => {
      const { store, clock } = await retentionStore()
      const events: QueryAuditRetentionEvent[] = []
      const sweeper = new QueryAuditRetention(
        store.context,
        store.context.secrets.derive(CHAIN_KEY_PURPOSE),
        { days: 30, clock: () => clock.now, intervalMs: 20, onEvent: (e) => events.push(e) },
      )
      try {
        sweeper.start()
        const until = async (n: number) => {
          for (let i = 0; i < 500 && events.length < n; i++)
            await new Promise((r) => setTimeout(r, 20))
        }
        await until(1)
        expect(events.map((e) => e.type === 'removed' && e.removal.removed_entries)).toEqual([8])
        clock.now += 2 * DAY
        await until(2)
        expect(events.map((e) => e.type === 'removed' && e.removal.removed_entries)).toEqual([8, 2])
        await sweeper.stop()
        expect((await store.audit.queries.list()).total).toBe(4)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await sweeper.stop()
        await store.close()
      }
    })

    it('keeps hourly totals exact when an hour is removed only in part', async () => {
      const store = await makeStore()
      try {
        await bootstrapAdmin(store)
        const hour = Date.parse('2026-03-01T10:00:00Z')
        await batch(store, 'early', [hour + 10 * 60_000, hour + 20 * 60_000])
        await batch(store, 'late', [hour + 40 * 60_000, hour + 50 * 60_000])
        const removal = await store.audit.queries.removeOlderThan(new Date(hour + 30 * 60_000))
        expect(removal).toMatchObject({ removed_entries: 2 })
        const wholeHour = { from: new Date(hour), to: new Date(hour + HOUR - 1) }
        expect((await store.audit.queries.list(wholeHour)).total).toBe(2)
        const [bucket] = (await store.audit.queries.timeline(wholeHour)).buckets
        expect((bucket?.success ?? 0) + (bucket?.denied ?? 0)).toBe(2)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('records the acting admin of a removal run by hand, and does nothing with retention off', async () => {
      const store = await makeStore()
      try {
        const admin = await bootstrapAdmin(store)
        expect(store.auditRetention.days).toBeUndefined()
        await batch(store, 'x', [NOW - 10 * DAY])
        expect(await store.auditRetention.sweep()).toBeNull()
        expect((await store.audit.queries.list()).total).toBe(1)
        const removal = await store.audit.queries.removeOlderThan(new Date(NOW), admin.id)
        expect(removal?.removed_entries).toBe(1)
        const [entry] = (await store.audit.admin.list({ resource_type: 'query_audit' })).data
        expect(entry?.actor_id).toBe(admin.id)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('refuses a retention that is not a positive whole number of days', async () => {
      for (const days of [0, -1, 1.5, Number.NaN]) {
        await expect(makeStore({ queryAuditRetentionDays: days })).rejects.toThrow(
          'positive whole number of days',
        )
      }
    })

    it('serializes concurrent runs: one removes, the other finds nothing', async () => {
      const { store } = await retentionStore()
      try {
        const results = await Promise.all([
          store.auditRetention.sweep(),
          store.auditRetention.sweep(),
        ])
        expect(results.filter((r) => r !== null).map((r) => r?.removed_entries)).toEqual([8])
        expect((await store.audit.admin.list({ resource_type: 'query_audit' })).total).toBe(1)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('keeps old batches that come after a batch that stays, so no chain gets a hole', async () => {
      const store = await makeStore()
      try {
        await bootstrapAdmin(store)
        await batch(store, 'first-new', [NOW - DAY])
        await batch(store, 'then-old', [NOW - 40 * DAY])
        expect(await store.audit.queries.removeOlderThan(new Date(NOW - 30 * DAY))).toBeNull()
        expect((await store.audit.queries.list()).total).toBe(2)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('reports a changed or deleted checkpoint', async () => {
      const { store } = await retentionStore()
      try {
        const removal = await store.auditRetention.sweep()
        const id = removal?.checkpoint_id as string
        const key = store.context.secrets.derive(CHAIN_KEY_PURPOSE)
        expect(await verifyCheckpointSignatures(store.db, key)).toBeNull()
        // Moving the chain's start back (to hide a removal behind Palisade's back) breaks the signature.
        await tamper(
          store,
          'query_audit_checkpoints',
          `UPDATE query_audit_checkpoints SET positions = replace(positions, '"seq":8', '"seq":7') WHERE id = '${id}'`,
        )
        expect(await verifyCheckpointSignatures(store.db, key)).toBe(id)
        let verified = await store.audit.verify()
        expect(verified.ok).toBe(false)
        expect(verified.first_broken?.reason).toMatch(/checkpoint/)
        // Another hash, same seq: the same.
        await tamper(
          store,
          'query_audit_checkpoints',
          `UPDATE query_audit_checkpoints SET positions = replace(positions, '"seq":7', '"seq":8') WHERE id = '${id}'`,
        )
        expect((await store.audit.verify()).ok).toBe(true)
        await tamper(
          store,
          'query_audit_checkpoints',
          `UPDATE query_audit_checkpoints SET positions = regexp_replace(positions, '"hash":"[0-9a-f]', '"hash":"x') WHERE id = '${id}'`,
        )
        verified = await store.audit.verify()
        expect(verified.ok).toBe(false)
        expect(verified.first_broken?.reason).toMatch(/checkpoint/)
        // Without the checkpoint, the chain starts at entry 9: entries 1 to 8 are missing.
        await tamper(
          store,
          'query_audit_checkpoints',
          `DELETE FROM query_audit_checkpoints WHERE id = '${id}'`,
        )
        verified = await store.audit.verify()
        expect(verified.ok).toBe(false)
        expect(verified.first_broken?.reason).toMatch(/entries 1 to 8 .* missing/)
      } finally {
        await store.close()
      }
    })

    it('still refuses deleting batches and texts outside a retention run, and any update', async () => {
      const { store } = await retentionStore()
      try {
        const chunks = () =>
          rowsOf<{ id: string; last_at: string }>(
            store.db.execute(
              sql`SELECT id::text AS id, last_at::text AS last_at FROM query_audit_chunks ORDER BY first_at`,
            ),
          )
        const [oldest] = await chunks()
        // Without a checkpoint, nothing may go, not even inside a retention run.
        expect(await failure(() => store.db.execute(sql`DELETE FROM query_audit_chunks`))).toMatch(
          /append-only/,
        )
        expect(
          await failure(() =>
            store.db.transaction(async (tx) => {
              await tx.execute(sql`SELECT set_config('palisade.audit_retention', 'on', true)`)
              await tx.execute(sql`DELETE FROM query_audit_chunks WHERE id = ${oldest?.id}::uuid`)
            }),
          ),
        ).toMatch(/append-only/)
        await store.auditRetention.sweep()
        const left = await chunks()
        expect(left).toHaveLength(2)
        // A batch newer than every checkpoint's cutoff stays, even inside a retention run.
        expect(
          await failure(() =>
            store.db.transaction(async (tx) => {
              await tx.execute(sql`SELECT set_config('palisade.audit_retention', 'on', true)`)
              await tx.execute(sql`DELETE FROM query_audit_chunks WHERE id = ${left[1]?.id}::uuid`)
            }),
          ),
        ).toMatch(/append-only/)
        expect(await failure(() => store.db.execute(sql`DELETE FROM query_audit_chunks`))).toMatch(
          /append-only/,
        )
        for (const statement of [
          'UPDATE query_audit_chunks SET entries = entries',
          'TRUNCATE query_audit_chunks',
          'DELETE FROM query_audit_texts',
          'UPDATE query_audit_texts SET body = body',
          'TRUNCATE query_audit_texts',
          'UPDATE query_audit_checkpoints SET cutoff = cutoff + 1',
          'DELETE FROM query_audit_checkpoints',
          'TRUNCATE query_audit_checkpoints',
        ]) {
          expect([statement, await failure(() => store.db.execute(sql.raw(statement)))]).toEqual([
            statement,
            expect.stringMatching(/append-only/),
          ])
        }
        expect((await store.audit.queries.list()).total).toBe(6)
        expect((await store.audit.verify()).ok).toBe(true)
      } finally {
        await store.close()
      }
    })

    it('removes batches moved from the row-per-entry log, resuming at their HMAC link', async () => {
      const store = await makeStore()
      try {
        await bootstrapAdmin(store)
        const key = store.context.secrets.derive(CHAIN_KEY_PURPOSE)
        const chain = 'legacy-chain'
        let prev = ''
        let seq = 1
        // Three format-1 batches (as migration 0014 makes them), two old and one recent.
        for (const [n, at] of [
          [2, NOW - 50 * DAY],
          [1, NOW - 45 * DAY],
          [2, NOW - DAY],
        ] as const) {
          const bodies = Array.from({ length: n }, (_, i) => `SELECT legacy ${seq + i}`)
          const texts = [...bodies.map(textDigest), textDigest('[]')]
          const row: ChunkRow = {
            id: `0190f000-0000-7000-8000-${String(seq).padStart(12, '0')}`,
            format: 1,
            chain_id: chain,
            first_seq: seq,
            prev_hash: null,
            hash: null,
            first_at: at,
            last_at: at + n - 1,
            entries: n,
            status_mask: 1,
            p_user_id: [U1],
            p_username: ['legacy'],
            p_ds_id: [D1],
            p_ds_name: ['shop'],
            p_client_info: [null],
            texts,
            p_counts: null,
            e_data: null,
            e_literals: null,
            e_id: bodies.map(
              (_, i) => `0190f000-0000-7000-8000-${String(1000 + seq + i).padStart(12, '0')}`,
            ),
            e_at: bodies.map((_, i) => at + i),
            e_principal: bodies.map(() => 1),
            e_original: bodies.map((_, i) => i + 1),
            e_params: bodies.map(() => null),
            e_rewritten: bodies.map(() => null),
            e_policies: bodies.map(() => n + 1),
            e_elapsed: bodies.map(() => 1),
            e_status: bodies.map(() => 0),
            e_error: bodies.map(() => null),
            e_shadow: bodies.map(() => null),
            e_shadow_denied: bodies.map(() => null),
            e_hash: [],
          }
          const lookup = new Map([...bodies, '[]'].map((b) => [textDigest(b), b]))
          for (let i = 0; i < n; i++) {
            prev = chainHash(key, prev, canonicalQueryEntry(entryAt(row, i, (d) => lookup.get(d))))
            row.e_hash?.push(prev)
          }
          for (const [digest, body] of lookup) {
            await store.db.execute(
              sql`INSERT INTO query_audit_texts (digest, body) VALUES (${digest}::uuid, ${body}) ON CONFLICT DO NOTHING`,
            )
          }
          await store.db.execute(
            sql`INSERT INTO query_audit_chunks SELECT * FROM json_populate_record(NULL::query_audit_chunks, ${JSON.stringify(row)}::json)`,
          )
          seq += n
        }
        expect((await store.audit.verify()).ok).toBe(true)
        const removal = await store.audit.queries.removeOlderThan(new Date(NOW - 30 * DAY))
        expect(removal).toMatchObject({ removed_batches: 2, removed_entries: 3 })
        expect(removal?.positions).toEqual([{ chain_id: chain, seq: 3, hash: expect.any(String) }])
        const verified = await store.audit.verify()
        expect(verified.first_broken).toBeNull()
        expect(verified.logs.find((l) => l.log === 'queries')?.entries).toBe(2)
      } finally {
        await store.close()
      }
    })
  })
}
