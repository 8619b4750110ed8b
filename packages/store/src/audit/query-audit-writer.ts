import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { type Db, isStoreUnreachable } from '../kernel/db.js'
import { type AuditBatch, AuditBatchBuilder, splitBatch } from './audit-batch.js'
import { MAX_CHUNK_ENTRIES } from './audit-chunk-format.js'
import { AuditIngest, INSERT_BATCH } from './audit-ingest.js'

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
  /**
   * The statement as a rewrite template filled with literals (core's `RewrittenStatement.template`):
   * stored as the shared template plus the literals; `original_query` and `rewritten_query` must
   * be what filling it gives.
   */
  template?: {
    readonly originalSql: string
    readonly sql: string
    readonly literals: readonly string[]
  }
}

/** Where batches go: the thread that hashes, encodes and stores them (audit-ingest.ts). */
export interface AuditSink {
  write(batch: AuditBatch): Promise<void>
}

/** A sink that stores batches on this thread through `db` (tests; stores handed in by hand). */
export function inProcessSink(db: Db, key?: Buffer): AuditSink {
  const ingest = new AuditIngest(key, key ? randomUUID() : undefined)
  // INSERT_BATCH with its `$n` placeholders turned into drizzle parameters.
  const pieces = INSERT_BATCH.split(/\$\d+/)
  const order = [...INSERT_BATCH.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]) - 1)
  const run = async (params: (string | null)[]) => {
    const chunks = pieces.flatMap((piece, i) =>
      i < order.length ? [sql.raw(piece), sql`${params[order[i] as number]}`] : [sql.raw(piece)],
    )
    await db.execute(sql.join(chunks))
  }
  return { write: (batch) => ingest.write(run, batch) }
}

/** Tuning of the writer; the defaults suit one proxy process. */
export interface QueryAuditWriterOptions {
  /**
   * Entries per stored batch (default and most 4,096): storing a batch costs the store about as
   * much whatever its size, so under load full batches cost it least per row.
   */
  batchSize?: number
  /** Longest time a row waits before its batch is written (default 200 ms: fuller batches cost the store less per row). */
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
  /** With a store handed in as a `Db`: the key batches are sealed with; without one, unlinked. */
  chainKey?: Buffer
}

/** Longest pause between attempts while the store is unreachable. */
const MAX_BACKOFF_MS = 2000

/**
 * Queues query-audit entries in memory and hands them, in batches, to the thread that stores
 * them, off the query's path (docs/audit.md#query-audit). The serving thread only fills a
 * columnar batch (audit-batch.ts); hashing, encoding and writing happen in the sink.
 * Overflow: when `maxQueue` entries are waiting (the store is down or too slow), new ones are
 * dropped and counted in `stats.dropped` rather than blocking queries or growing without bound.
 * A failed batch is retried up to 3 times, then written entry by entry; entries that still fail
 * are dropped and counted in `stats.failed`. While the store cannot be reached at all, batches
 * stay queued (within `maxQueue`) and writing resumes, with backoff, once it answers again.
 */
export class QueryAuditWriter {
  readonly #sink: AuditSink
  readonly #batchSize: number
  readonly #intervalMs: number
  readonly #maxQueue: number
  readonly #onProblem: (message: string) => void
  readonly #highWater: number
  /** Those waiting for the backlog to shrink. */
  #waiting: Array<() => void> = []
  /** The batch being filled, and the full ones waiting to be stored. */
  readonly #builder: AuditBatchBuilder
  #queue: AuditBatch[] = []
  /** Entries in `#queue` (the one being stored included). */
  #queuedEntries = 0
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #overflowing = false
  #closed = false
  #flushing = false
  /** Delay before the next attempt while the store is unreachable; 0 while it answers. */
  #backoffMs = 0
  /** Counters for monitoring. */
  readonly stats = { written: 0, dropped: 0, failed: 0 }

  /** `target`: a sink (the store's own thread), or a `Db` to store through on this thread. */
  constructor(target: Db | AuditSink, options: QueryAuditWriterOptions = {}) {
    this.#sink = isSink(target) ? target : inProcessSink(target, options.chainKey)
    this.#batchSize = options.batchSize ?? MAX_CHUNK_ENTRIES
    this.#builder = new AuditBatchBuilder(this.#batchSize)
    this.#intervalMs = options.intervalMs ?? 200
    this.#maxQueue = options.maxQueue ?? 100_000
    this.#highWater = Math.max(1, Math.min(options.highWater ?? 20_000, this.#maxQueue / 2))
    this.#onProblem = options.onProblem ?? (() => {})
  }

  /** Entries waiting to be written. */
  get queued(): number {
    return this.#queuedEntries + this.#builder.size
  }

  /**
   * While the store answers but falls behind (more than `highWater` entries waiting), a promise
   * that resolves once half of them are written: the data plane waits for it before a client's
   * next statement, so a store slower than the queries paces them instead of losing entries.
   * While the store cannot be reached, nothing waits (entries queue, then overflow, as documented).
   */
  backlog(): Promise<void> | undefined {
    if (this.queued < this.#highWater || this.#backoffMs > 0 || this.#closed) {
      return undefined
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /** Lets the waiting go once the backlog has halved, the store is unreachable or closed. */
  #release(): void {
    if (this.#waiting.length === 0) return
    if (this.queued >= this.#highWater / 2 && this.#backoffMs === 0 && !this.#closed) return
    for (const resolve of this.#waiting.splice(0)) resolve()
  }

  /** Queues one entry; returns false when it was dropped (queue full or writer closed). */
  write(record: QueryAuditRecord): boolean {
    if (this.#closed || this.queued >= this.#maxQueue) {
      this.stats.dropped++
      if (!this.#overflowing) {
        this.#overflowing = true
        this.#onProblem('query audit queue is full; dropping rows')
      }
      return false
    }
    this.#overflowing = false
    this.#builder.add(record)
    if (this.#builder.full) this.#seal()
    // While the store is unreachable, the backoff timer paces the attempts.
    if (this.#queue.length > 0 && this.#backoffMs === 0) this.#kick()
    else this.#schedule()
    return true
  }

  /** Moves the batch being filled to the queue. */
  #seal(): void {
    const batch = this.#builder.take()
    if (!batch) return
    this.#queue.push(batch)
    this.#queuedEntries += batch.n
  }

  /** Writes everything queued so far; call on shutdown. */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    // A flush ends: with the store unreachable its entries are retried and dropped, not kept.
    this.#flushing = true
    try {
      this.#seal()
      while (this.#queue.length > 0 || this.#running) {
        if (!this.#running) this.#kick()
        await this.#running
        this.#seal()
      }
    } finally {
      this.#flushing = false
    }
  }

  /** Flushes and refuses further entries. */
  async close(): Promise<void> {
    this.#closed = true
    this.#release()
    await this.flush()
  }

  #schedule(): void {
    if (this.#timer || this.#running) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#seal()
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
      if (this.queued > 0 && !this.#closed) this.#schedule()
    })
  }

  /** After a batch failed repeatedly: write its entries singly, so only the bad ones are lost. */
  async #writeOneByOne(batch: AuditBatch, cause: unknown): Promise<void> {
    let lost = 0
    for (const single of splitBatch(batch)) {
      try {
        await this.#sink.write(single)
        this.stats.written++
      } catch {
        lost++
      }
    }
    if (lost > 0) {
      this.stats.failed += lost
      this.#onProblem(`query audit lost ${lost} of ${batch.n} rows: ${String(cause)}`)
    }
  }

  async #drain(): Promise<void> {
    for (;;) {
      const batch = this.#queue[0]
      if (!batch) return
      let attempt = 0
      for (;;) {
        try {
          await this.#sink.write(batch)
          this.#done(batch)
          this.stats.written += batch.n
          this.#release()
          if (this.#backoffMs > 0) {
            this.#backoffMs = 0
            this.#onProblem('query audit: the store answers again; writing the queued rows')
          }
          break
        } catch (error) {
          if (!this.#closed && !this.#flushing && isStoreUnreachable(error)) {
            // Keep the batch for when the store is back; new entries keep queueing up to maxQueue.
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
            this.#done(batch)
            await this.#writeOneByOne(batch, error)
            this.#release()
            break
          }
          await new Promise((r) => setTimeout(r, this.#intervalMs * attempt))
        }
      }
    }
  }

  /** Takes a stored (or given up) batch off the queue. */
  #done(batch: AuditBatch): void {
    this.#queue.shift()
    this.#queuedEntries -= batch.n
  }
}

function isSink(target: Db | AuditSink): target is AuditSink {
  return typeof (target as Partial<AuditSink>).write === 'function' && !('execute' in target)
}
