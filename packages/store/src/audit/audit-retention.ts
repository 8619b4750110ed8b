import { sql } from 'drizzle-orm'
import { SYSTEM_ACTOR_ID } from '../access/grant-expiry.js'
import type { StoreContext } from '../kernel/context.js'
import { type Db, rowsOf } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import { queryAuditCheckpoints } from '../tables.js'
import { type ChainPosition, loadCheckpoints, signCheckpoint } from './audit-checkpoints.js'
import { entryAt, entryHash } from './audit-chunk-format.js'
import {
  CHUNK_HEAD,
  type ChunkHead,
  chunkRows,
  chunksById,
  entryDigests,
  loadTexts,
  uuidArray,
} from './audit-chunk-reads.js'
import { hourlyCounts } from './audit-ingest.js'

/**
 * Retention of the query audit (docs/audit.md#retention): whole batches whose entries are all
 * older than a cutoff are removed, never single entries, in one transaction that first records
 * a signed checkpoint (audit-checkpoints.ts), then removes the batches, the texts no remaining
 * batch refers to and their share of the hourly counts, and writes an admin-audit entry. The
 * database refuses to delete a batch outside such a run (migration 0015).
 */

/** Serializes retention runs of every instance on one store. */
const RETENTION_LOCK = 0x5a11_0a7d
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** Batches whose last entries' hashes are read per query. */
const PAGE = 100

/** A place where a chain's removed stretch does not follow on from what came before it. */
export interface RetentionBreak {
  chain_id: string
  /** The sequence number the stretch should have continued with. */
  expected_seq: number
  /** The first sequence number of the batch found there. */
  found_seq: number
}

/** What one retention run removed. */
export interface QueryAuditRemoval {
  /** The checkpoint recorded (also the admin-audit entry's `resource_id`). */
  checkpoint_id: string
  /** Batches whose last entry is older than this were removed (ISO-8601). */
  cutoff: string
  removed_batches: number
  removed_entries: number
  removed_texts: number
  /** Where the chains that lost entries now resume. */
  positions: ChainPosition[]
  /**
   * Discontinuities found inside what was removed (entries missing before retention ran):
   * recorded in the admin-audit entry, since the entries around them are gone.
   */
  breaks: RetentionBreak[]
}

interface Candidate {
  id: string
  chain_id: string | null
  first_seq: number | null
  entries: number
  first_at: number
  last_at: number
  kept_first: number | null
}

/**
 * Removes the query-audit batches whose entries are all older than `cutoffMs`, as one audited
 * mutation of `actorId` (default: the system actor). A batch that straddles the cutoff stays;
 * so do older batches of a chain that come after one that stays (times out of order), so every
 * chain remains contiguous from its checkpoint. Returns null when nothing was old enough.
 */
export async function removeExpiredQueryAudit(
  ctx: StoreContext,
  key: Buffer,
  options: { cutoffMs: number; actorId?: string; retentionDays?: number },
): Promise<QueryAuditRemoval | null> {
  const cutoff = Math.floor(options.cutoffMs)
  if (!Number.isSafeInteger(cutoff)) throw new Error('retention cutoff must be a valid time')
  return ctx.mutate(options.actorId ?? SYSTEM_ACTOR_ID, async (m) => {
    const tx: Db = m.tx
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${RETENTION_LOCK})`)
    const found = await rowsOf<Record<keyof Candidate, unknown>>(
      tx.execute(sql`
        WITH kept AS (
          SELECT chain_id, min(first_seq) AS first FROM query_audit_chunks
          WHERE last_at >= ${cutoff}::bigint AND chain_id IS NOT NULL GROUP BY chain_id
        )
        SELECT c.id::text AS id, c.chain_id, c.first_seq::float8 AS first_seq, c.entries,
          c.first_at::float8 AS first_at, c.last_at::float8 AS last_at,
          k.first::float8 AS kept_first
        FROM query_audit_chunks c LEFT JOIN kept k ON k.chain_id = c.chain_id
        WHERE c.last_at < ${cutoff}::bigint
          AND (c.chain_id IS NULL OR k.first IS NULL OR c.first_seq < k.first)
        ORDER BY c.chain_id, c.first_seq`),
    )
    if (found.length === 0) {
      m.noop()
      return null
    }
    const candidates: Candidate[] = found.map((r) => ({
      id: String(r.id),
      chain_id: r.chain_id === null ? null : String(r.chain_id),
      first_seq: r.first_seq === null ? null : Number(r.first_seq),
      entries: Number(r.entries),
      first_at: Number(r.first_at),
      last_at: Number(r.last_at),
      kept_first: r.kept_first === null ? null : Number(r.kept_first),
    }))
    const previous = await loadCheckpoints(tx, key)
    const { lastOfChain, breaks } = chainEnds(candidates, previous)
    const positions = await chainPositions(tx, lastOfChain)
    const ids = candidates.map((c) => c.id)
    const idList = uuidArray(ids)
    const removedEntries = candidates.reduce((n, c) => n + c.entries, 0)
    const checkpoint = {
      id: uuidv7(),
      createdAt: m.now.getTime(),
      cutoff,
      positions: JSON.stringify(positions),
      removedChunks: candidates.length,
      removedEntries,
    }
    // Batches being stored wait from here to the commit, and those stored before are all seen
    // below: a text a new batch uses again is not deleted under it. Taken before any counts row
    // is locked, so a batch's own counts update never waits on this run while holding the table.
    await tx.execute(sql`LOCK TABLE query_audit_texts IN SHARE ROW EXCLUSIVE MODE`)
    await tx
      .insert(queryAuditCheckpoints)
      .values({ ...checkpoint, signature: signCheckpoint(key, checkpoint) })
    // The hourly counts lose exactly the removed entries, so list totals keep matching the entries.
    const removedCounts = await countsOfChunks(tx, ids)
    await tx.execute(sql`
      UPDATE query_audit_counts q SET n = q.n - g.n
      FROM json_to_recordset(${JSON.stringify(removedCounts)}::json)
        AS g(bucket timestamp, user_id uuid, data_source_id uuid, status text, n bigint)
      WHERE q.bucket = g.bucket AND q.user_id = g.user_id
        AND q.data_source_id = g.data_source_id AND q.status = g.status`)
    const firstAt = candidates.reduce((t, c) => Math.min(t, c.first_at), Number.POSITIVE_INFINITY)
    const lastAt = candidates.reduce((t, c) => Math.max(t, c.last_at), 0)
    await tx.execute(sql`
      DELETE FROM query_audit_counts WHERE n <= 0
        AND bucket >= to_timestamp((${firstAt}::bigint / ${HOUR_MS}::bigint) * 3600) AT TIME ZONE 'UTC'
        AND bucket <= to_timestamp((${lastAt}::bigint / ${HOUR_MS}::bigint) * 3600) AT TIME ZONE 'UTC'`)
    // The database lets a batch or a text go only inside a run like this one (migration 0015).
    await tx.execute(sql`SELECT set_config('palisade.audit_retention', 'on', true)`)
    const [removed] = await rowsOf<{ chunks: unknown; texts: unknown }>(
      tx.execute(sql`
        WITH gone AS (
          DELETE FROM query_audit_chunks WHERE id = ANY(${idList}::uuid[]) RETURNING id, texts
        ),
        cand AS (SELECT DISTINCT u AS d FROM gone, unnest(gone.texts) AS u WHERE u IS NOT NULL),
        still AS (
          SELECT DISTINCT u AS d
          FROM query_audit_chunks c CROSS JOIN LATERAL unnest(c.texts) AS u
          JOIN cand ON cand.d = u
          WHERE NOT EXISTS (SELECT 1 FROM gone WHERE gone.id = c.id)
        ),
        t AS (
          DELETE FROM query_audit_texts t USING cand
          WHERE t.digest = cand.d AND NOT EXISTS (SELECT 1 FROM still WHERE still.d = cand.d)
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM gone) AS chunks, (SELECT count(*) FROM t) AS texts`),
    )
    if (Number(removed?.chunks) !== candidates.length) {
      throw new Error('query-audit retention: the batches to remove changed during the run')
    }
    const result: QueryAuditRemoval = {
      checkpoint_id: checkpoint.id,
      cutoff: new Date(cutoff).toISOString(),
      removed_batches: candidates.length,
      removed_entries: removedEntries,
      removed_texts: Number(removed?.texts ?? 0),
      positions,
      breaks,
    }
    m.audit('query_audit', checkpoint.id, 'delete', {
      reason: 'retention',
      cutoff: result.cutoff,
      ...(options.retentionDays === undefined ? {} : { retention_days: options.retentionDays }),
      removed_batches: result.removed_batches,
      removed_entries: result.removed_entries,
      removed_texts: result.removed_texts,
      oldest_removed: new Date(firstAt).toISOString(),
      newest_removed: new Date(lastAt).toISOString(),
      chains: positions.length,
      ...(breaks.length > 0 ? { breaks } : {}),
    })
    return result
  })
}

/**
 * The last removed batch of each chain, and where a chain's removed stretch does not follow on
 * from its checkpoint or from the batch before. Throws if removal would leave a chain with a
 * hole (a batch of the chain that stays before one that goes): the selection rules that out.
 */
function chainEnds(
  candidates: readonly Candidate[],
  previous: ReadonlyMap<string, { seq: number }>,
): { lastOfChain: Map<string, Candidate>; breaks: RetentionBreak[] } {
  const lastOfChain = new Map<string, Candidate>()
  const expected = new Map<string, number>()
  const breaks: RetentionBreak[] = []
  for (const c of candidates) {
    if (c.chain_id === null || c.first_seq === null) continue
    const next = expected.get(c.chain_id) ?? (previous.get(c.chain_id)?.seq ?? 0) + 1
    if (c.first_seq !== next) {
      breaks.push({ chain_id: c.chain_id, expected_seq: next, found_seq: c.first_seq })
    }
    expected.set(c.chain_id, c.first_seq + c.entries)
    lastOfChain.set(c.chain_id, c)
  }
  for (const [chain, last] of lastOfChain) {
    const end = (last.first_seq as number) + last.entries - 1
    if (last.kept_first !== null && last.kept_first <= end) {
      throw new Error(`query-audit retention would leave chain ${chain} with a hole`)
    }
  }
  return { lastOfChain, breaks }
}

/** Per chain, the last removed entry's sequence number and content hash, sorted by chain. */
async function chainPositions(
  db: Db,
  lastOfChain: ReadonlyMap<string, Candidate>,
): Promise<ChainPosition[]> {
  const positions: ChainPosition[] = []
  const ids = [...lastOfChain.values()].map((c) => c.id)
  for (let at = 0; at < ids.length; at += PAGE) {
    const rows = await chunksById(db, ids.slice(at, at + PAGE))
    const last = (row: (typeof rows)[number]) => row.entries - 1
    const texts = await loadTexts(
      db,
      rows.filter((r) => r.format !== 1).flatMap((r) => entryDigests(r, last(r))),
    )
    for (const row of rows) {
      const n = last(row)
      const hash =
        row.format === 1
          ? (row.e_hash?.[n] ?? '')
          : entryHash(entryAt(row, n, (digest) => texts.get(digest)))
      positions.push({
        chain_id: row.chain_id as string,
        seq: Number(row.first_seq) + n,
        hash,
      })
    }
  }
  return positions.sort((a, b) => (a.chain_id < b.chain_id ? -1 : a.chain_id > b.chain_id ? 1 : 0))
}

/** Problems and results of the retention sweep, for the operator log. */
export type QueryAuditRetentionEvent =
  | { type: 'removed'; removal: QueryAuditRemoval }
  | { type: 'failed'; error: unknown }

/** Settings of the retention sweep. */
export interface QueryAuditRetentionOptions {
  /** Keep entries this many days (a positive integer); undefined: keep everything. */
  days?: number | undefined
  /** The time the cutoff is counted back from (default `Date.now`); tests set their own. */
  clock?: (() => number) | undefined
  /** Time between sweeps (default one hour). */
  intervalMs?: number | undefined
  onEvent?: ((event: QueryAuditRetentionEvent) => void) | undefined
}

/** Checks a retention setting: a positive integer number of days, or undefined. */
export function retentionDays(days: number | undefined): number | undefined {
  if (days === undefined) return undefined
  if (!Number.isSafeInteger(days) || days < 1) {
    throw new Error('query audit retention must be a positive whole number of days')
  }
  return days
}

/**
 * Runs retention now and then: once at start, then every `intervalMs`. Every instance sweeps;
 * runs are serialized in the store, and a run that finds nothing old enough writes nothing.
 */
export class QueryAuditRetention {
  readonly #ctx: StoreContext
  readonly #key: Buffer
  readonly #days: number | undefined
  readonly #clock: () => number
  readonly #intervalMs: number
  readonly #onEvent: (event: QueryAuditRetentionEvent) => void
  #timer: ReturnType<typeof setTimeout> | undefined
  #queue: Promise<unknown> = Promise.resolve()
  #stopped = false

  constructor(ctx: StoreContext, key: Buffer, options: QueryAuditRetentionOptions = {}) {
    this.#ctx = ctx
    this.#key = key
    this.#days = retentionDays(options.days)
    this.#clock = options.clock ?? Date.now
    this.#intervalMs = options.intervalMs ?? HOUR_MS
    this.#onEvent = options.onEvent ?? (() => {})
  }

  /** The retention in days, or undefined when entries are kept for ever. */
  get days(): number | undefined {
    return this.#days
  }

  /** Sweeps now and every interval after (only with a retention set). */
  start(): void {
    if (this.#days === undefined) return
    this.#enqueue()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#queue
  }

  /** Removes what the retention setting no longer keeps; null when off or nothing was old enough. */
  async sweep(): Promise<QueryAuditRemoval | null> {
    if (this.#days === undefined) return null
    return removeExpiredQueryAudit(this.#ctx, this.#key, {
      cutoffMs: this.#clock() - this.#days * DAY_MS,
      retentionDays: this.#days,
    })
  }

  /** Removes the batches whose entries are all older than `before`, audited as `actorId`. */
  removeOlderThan(before: Date, actorId?: string): Promise<QueryAuditRemoval | null> {
    return removeExpiredQueryAudit(this.#ctx, this.#key, {
      cutoffMs: before.getTime(),
      ...(actorId ? { actorId } : {}),
    })
  }

  #enqueue(): void {
    this.#queue = this.#queue
      .then(async () => {
        if (this.#stopped) return
        const removal = await this.sweep()
        if (removal) this.#onEvent({ type: 'removed', removal })
      })
      .catch((error: unknown) => {
        // Retried at the next sweep (the store may be briefly unreachable).
        this.#onEvent({ type: 'failed', error })
      })
      .finally(() => this.#arm())
  }

  #arm(): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#enqueue(), this.#intervalMs)
    this.#timer.unref?.()
  }
}

/** The hourly counts (`query_audit_counts` rows) of the entries of batches `ids`, summed. */
async function countsOfChunks(db: Db, ids: readonly string[]) {
  const sums = new Map<string, ReturnType<typeof hourlyCounts>[number]>()
  for (let at = 0; at < ids.length; at += PAGE) {
    const heads = await chunkRows<ChunkHead>(
      db,
      sql`SELECT ${CHUNK_HEAD} AS j FROM query_audit_chunks c
        WHERE c.id = ANY(${uuidArray(ids.slice(at, at + PAGE))}::uuid[])`,
    )
    for (const head of heads) {
      const counted = hourlyCounts(head, {
        n: head.entries,
        at: head.e_at,
        principal: head.e_principal.map((p) => p - 1),
        status: head.e_status,
      })
      for (const c of counted) {
        const key = `${c.bucket}|${c.user_id}|${c.data_source_id}|${c.status}`
        const known = sums.get(key)
        if (known) known.n += c.n
        else sums.set(key, { ...c })
      }
    }
  }
  return [...sums.values()]
}
