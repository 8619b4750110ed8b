import { sql } from 'drizzle-orm'
import { constraintOf, type Db, isStoreUnreachable, sqlStateOf } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import type { queryAuditLog } from '../tables.js'
import { type AuditChain, canonicalQueryEntry } from './audit-chain.js'

/** One statement to record (docs/audit.md#query-audit); `policies_applied` may be given as an array. */
export interface QueryAuditRecord {
  user_id: string
  username: string
  data_source_id: string
  datasource_name: string
  original_query: string
  rewritten_query?: string | null
  policies_applied?: string | readonly unknown[]
  execution_time_ms?: number | null
  client_info?: string | null
  status: 'success' | 'error' | 'denied'
  error_message?: string | null
  /** Shadow policies that matched (as `policies_applied`), when the session has any. */
  shadow_policies?: string | readonly unknown[] | null
  /** Whether enforcing the shadow policies would have refused the statement. */
  shadow_denied?: boolean | null
  /** Defaults to the time `write` was called. */
  created_at?: Date
}

/** Tuning of the writer; the defaults suit one proxy process. */
export interface QueryAuditWriterOptions {
  /** Rows per INSERT (default 500). */
  batchSize?: number
  /** Longest time a row waits before its batch is written (default 50 ms). */
  intervalMs?: number
  /** Queue bound; rows offered while it is full are dropped and counted (default 100,000). */
  maxQueue?: number
  /**
   * Rows waiting beyond which `backlog()` asks the data plane to wait before its next statement,
   * while the store answers (default 20,000, at most half of `maxQueue`).
   */
  highWater?: number
  /** Called once per overflow episode and per failed batch, for the operator's log. */
  onProblem?: (message: string) => void
  /** The hash chain rows are linked into (the store gives its own); without one, unlinked. */
  chain?: AuditChain
}

type Insert = typeof queryAuditLog.$inferInsert

/** Longest pause between attempts while the store is unreachable. */
const MAX_BACKOFF_MS = 2000

/**
 * Queues query-audit rows in memory and writes them in batches, off the query's path (docs/audit.md#query-audit).
 * Overflow: when `maxQueue` rows are waiting (the store is down or too slow), new rows are
 * dropped and counted in `stats.dropped` rather than blocking queries or growing without bound.
 * A failed batch is retried up to 3 times, then written row by row; rows that still fail are
 * dropped and counted in `stats.failed`. While the store cannot be reached at all, rows stay
 * queued (within `maxQueue`) and writing resumes, with backoff, once it answers again.
 */
export class QueryAuditWriter {
  readonly #db: Db
  readonly #batchSize: number
  readonly #intervalMs: number
  readonly #maxQueue: number
  readonly #onProblem: (message: string) => void
  readonly #highWater: number
  /** Those waiting for the backlog to shrink. */
  #waiting: Array<() => void> = []
  #queue: Insert[] = []
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #overflowing = false
  #closed = false
  #flushing = false
  /** Delay before the next attempt while the store is unreachable; 0 while it answers. */
  #backoffMs = 0
  /** Counters for monitoring. */
  readonly stats = { written: 0, dropped: 0, failed: 0 }

  readonly #chain: AuditChain | undefined

  constructor(db: Db, options: QueryAuditWriterOptions = {}) {
    this.#db = db
    this.#chain = options.chain
    this.#batchSize = options.batchSize ?? 500
    this.#intervalMs = options.intervalMs ?? 50
    this.#maxQueue = options.maxQueue ?? 100_000
    this.#highWater = Math.max(1, Math.min(options.highWater ?? 20_000, this.#maxQueue / 2))
    this.#onProblem = options.onProblem ?? (() => {})
  }

  /** Rows waiting to be written. */
  get queued(): number {
    return this.#queue.length
  }

  /**
   * While the store answers but falls behind (more than `highWater` rows waiting), a promise
   * that resolves once half of them are written: the data plane waits for it before a client's
   * next statement, so a store slower than the queries paces them instead of losing rows. While
   * the store cannot be reached, nothing waits (rows queue, then overflow, as documented).
   */
  backlog(): Promise<void> | undefined {
    if (this.#queue.length < this.#highWater || this.#backoffMs > 0 || this.#closed) {
      return undefined
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /** Lets the waiting go once the backlog has halved, the store is unreachable or closed. */
  #release(): void {
    if (this.#waiting.length === 0) return
    if (this.#queue.length >= this.#highWater / 2 && this.#backoffMs === 0 && !this.#closed) return
    for (const resolve of this.#waiting.splice(0)) resolve()
  }

  /** Queues one row; returns false when it was dropped (queue full or writer closed). */
  write(record: QueryAuditRecord): boolean {
    if (this.#closed || this.#queue.length >= this.#maxQueue) {
      this.stats.dropped++
      if (!this.#overflowing) {
        this.#overflowing = true
        this.#onProblem('query audit queue is full; dropping rows')
      }
      return false
    }
    this.#overflowing = false
    const applied = record.policies_applied ?? '[]'
    const time = record.execution_time_ms
    // Rows are made storable here, so one odd value can never fail a whole batch.
    this.#queue.push({
      id: uuidv7(),
      userId: record.user_id,
      username: storable(record.username),
      dataSourceId: record.data_source_id,
      datasourceName: storable(record.datasource_name),
      originalQuery: storable(record.original_query),
      rewrittenQuery: nullableStorable(record.rewritten_query),
      policiesApplied: storable(typeof applied === 'string' ? applied : JSON.stringify(applied)),
      executionTimeMs:
        time === null || time === undefined || !Number.isFinite(time)
          ? null
          : Math.min(2_147_483_647, Math.max(0, Math.round(time))),
      clientInfo: nullableStorable(record.client_info?.slice(0, 256)),
      status: record.status,
      errorMessage: nullableStorable(record.error_message),
      shadowPolicies:
        record.shadow_policies === null || record.shadow_policies === undefined
          ? null
          : storable(
              typeof record.shadow_policies === 'string'
                ? record.shadow_policies
                : JSON.stringify(record.shadow_policies),
            ),
      shadowDenied: record.shadow_denied ?? null,
      createdAt: record.created_at ?? new Date(),
    })
    // While the store is unreachable, the backoff timer paces the attempts.
    if (this.#queue.length >= this.#batchSize && this.#backoffMs === 0) this.#kick()
    else this.#schedule()
    return true
  }

  /** Writes everything queued so far; call on shutdown. */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    // A flush ends: with the store unreachable its rows are retried and dropped, not kept.
    this.#flushing = true
    try {
      while (this.#queue.length > 0 || this.#running) {
        if (!this.#running) this.#kick()
        await this.#running
      }
    } finally {
      this.#flushing = false
    }
  }

  /** Flushes and refuses further rows. */
  async close(): Promise<void> {
    this.#closed = true
    this.#release()
    await this.flush()
  }

  #schedule(): void {
    if (this.#timer || this.#running) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#kick()
    }, this.#backoffMs || this.#intervalMs)
    this.#timer.unref()
  }

  #kick(): void {
    if (this.#running) return
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#running = this.#drain().finally(() => {
      this.#running = undefined
      if (this.#queue.length > 0 && !this.#closed) this.#schedule()
    })
  }

  /** Inserts rows linked into this writer's hash chain; the chain moves only if they are stored. */
  async #insert(rows: readonly Insert[]): Promise<void> {
    if (!this.#chain) {
      await insertBatch(this.#db, rows).catch((error: unknown) => {
        if (!alreadyStored(error)) throw error
      })
      return
    }
    // One drain runs at a time, so links are made and committed in order.
    const { links, commit } = this.#chain.link(
      rows.map((r) => canonicalQueryEntry({ ...r, createdAt: r.createdAt as Date })),
    )
    try {
      await insertBatch(
        this.#db,
        rows.map((r, i) => ({ ...r, ...links[i] })),
      )
    } catch (error) {
      if (!alreadyStored(error)) throw error
    }
    commit()
  }

  /** After a batch failed repeatedly: write its rows singly, so only the bad ones are lost. */
  async #writeOneByOne(batch: readonly Insert[], cause: unknown): Promise<void> {
    let lost = 0
    for (const row of batch) {
      try {
        await this.#insert([row])
        this.stats.written++
      } catch {
        lost++
      }
    }
    if (lost > 0) {
      this.stats.failed += lost
      this.#onProblem(`query audit lost ${lost} of ${batch.length} rows: ${String(cause)}`)
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#batchSize)
      let attempt = 0
      for (;;) {
        try {
          await this.#insert(batch)
          this.stats.written += batch.length
          this.#release()
          if (this.#backoffMs > 0) {
            this.#backoffMs = 0
            this.#onProblem('query audit: the store answers again; writing the queued rows')
          }
          break
        } catch (error) {
          if (!this.#closed && !this.#flushing && isStoreUnreachable(error)) {
            // Keep the rows for when the store is back; new rows keep queueing up to maxQueue.
            this.#queue.unshift(...batch)
            if (this.#backoffMs === 0) {
              this.#onProblem('query audit: the store is unreachable; keeping rows queued')
            }
            this.#backoffMs = Math.min(
              MAX_BACKOFF_MS,
              Math.max(this.#intervalMs, this.#backoffMs * 2),
            )
            this.#release()
            return
          }
          if (++attempt >= 3) {
            await this.#writeOneByOne(batch, error)
            this.#release()
            break
          }
          await new Promise((r) => setTimeout(r, this.#intervalMs * attempt))
        }
      }
    }
  }
}

/**
 * An earlier attempt of this very batch committed but its answer never arrived (the connection
 * dropped after COMMIT): one INSERT is all or nothing, so its rows are all stored, with the same
 * ids and the same chain links. Counting them lost would report rows that are there.
 */
function alreadyStored(error: unknown): boolean {
  return sqlStateOf(error) === '23505' && constraintOf(error) === 'query_audit_log_pkey'
}

/**
 * PostgreSQL text cannot hold NUL, nor JSON a lone surrogate half: both become U+FFFD rather
 * than failing the row.
 */
function storable(text: string): string {
  // ES2024 string methods (Node 20 has them; the compiler's library predates them).
  const checked = text as string & { isWellFormed(): boolean; toWellFormed(): string }
  const whole = checked.isWellFormed() ? text : checked.toWellFormed()
  return whole.includes('\u0000') ? whole.replaceAll('\u0000', '\uFFFD') : whole
}

function nullableStorable(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : storable(text)
}

/**
 * One INSERT per batch with the rows as one JSON parameter: V8 writes the JSON natively, where
 * one array parameter per column was escaped element by element in JavaScript, on the thread
 * that serves every client (docs/store.md#query-audit).
 */
async function insertBatch(db: Db, batch: readonly Insert[]): Promise<void> {
  const rows = JSON.stringify(
    batch.map((r) => ({
      id: r.id,
      user_id: r.userId,
      username: r.username,
      data_source_id: r.dataSourceId,
      datasource_name: r.datasourceName,
      original_query: r.originalQuery,
      rewritten_query: r.rewrittenQuery ?? null,
      policies_applied: r.policiesApplied ?? '[]',
      execution_time_ms: r.executionTimeMs ?? null,
      client_info: r.clientInfo ?? null,
      status: r.status,
      error_message: r.errorMessage ?? null,
      created_at: (r.createdAt as Date).toISOString(),
      chain_id: r.chainId ?? null,
      chain_seq: r.chainSeq ?? null,
      prev_hash: r.prevHash ?? null,
      hash: r.hash ?? null,
      shadow_policies: r.shadowPolicies ?? null,
      shadow_denied: r.shadowDenied ?? null,
    })),
  )
  await db.execute(sql`
    INSERT INTO query_audit_log (id, user_id, username, data_source_id, datasource_name,
      original_query, rewritten_query, policies_applied, execution_time_ms, client_info, status,
      error_message, created_at, chain_id, chain_seq, prev_hash, hash, shadow_policies,
      shadow_denied)
    SELECT * FROM json_to_recordset(${rows}::json) AS r(id uuid, user_id uuid, username text,
      data_source_id uuid, datasource_name text, original_query text, rewritten_query text,
      policies_applied text, execution_time_ms int, client_info text, status text,
      error_message text, created_at timestamptz, chain_id text, chain_seq bigint,
      prev_hash text, hash text, shadow_policies text, shadow_denied boolean)`)
}
