import { and, asc, count, desc, eq, gte, lt, lte, type SQL, sql } from 'drizzle-orm'
import { type Db, isStoreUnreachable } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { queryAuditCounts, queryAuditLog } from '../schema/index.js'
import { type AuditChain, canonicalQueryEntry, type ExportedLink, linkOf } from './audit-chain.js'
import {
  invalidParameter,
  parseTime,
  type TimeInput,
  timeRange,
  uuidFilter,
} from './audit-filters.js'

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

/** A stored query-audit entry (docs/audit.md#reading-the-logs). */
export interface QueryAuditEntry {
  id: string
  user_id: string
  username: string
  data_source_id: string
  datasource_name: string
  original_query: string
  rewritten_query: string | null
  policies_applied: string
  execution_time_ms: number | null
  client_info: string | null
  status: 'success' | 'error' | 'denied'
  error_message: string | null
  /** Shadow policies that matched, as a JSON text array; null when the session had none. */
  shadow_policies: string | null
  /** Whether enforcing them would have refused the statement; null without shadow policies. */
  shadow_denied: boolean | null
  created_at: string
}

/** Filters of `GET /audit/queries` (docs/audit.md#reading-the-logs). */
export interface QueryAuditFilter extends PageInput {
  user_id?: string
  datasource_id?: string
  status?: string
  from?: TimeInput
  to?: TimeInput
  since?: TimeInput
  until?: TimeInput
}

/** Tuning of the writer; the defaults suit one proxy process. */
export interface QueryAuditWriterOptions {
  /** Rows per INSERT (default 500). */
  batchSize?: number
  /** Longest time a row waits before its batch is written (default 50 ms). */
  intervalMs?: number
  /** Queue bound; rows offered while it is full are dropped and counted (default 100,000). */
  maxQueue?: number
  /** Called once per overflow episode and per failed batch, for the operator's log. */
  onProblem?: (message: string) => void
  /** The hash chain rows are linked into (the store gives its own); without one, unlinked. */
  chain?: AuditChain
}

type Insert = typeof queryAuditLog.$inferInsert

const STATUSES = new Set(['success', 'error', 'denied'])

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
    this.#onProblem = options.onProblem ?? (() => {})
  }

  /** Rows waiting to be written. */
  get queued(): number {
    return this.#queue.length
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
    if (!this.#chain) return insertBatch(this.#db, rows)
    // One drain runs at a time, so links are made and committed in order.
    const { links, commit } = this.#chain.link(
      rows.map((r) => canonicalQueryEntry({ ...r, createdAt: r.createdAt as Date })),
    )
    await insertBatch(
      this.#db,
      rows.map((r, i) => ({ ...r, ...links[i] })),
    )
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
            return
          }
          if (++attempt >= 3) {
            await this.#writeOneByOne(batch, error)
            break
          }
          await new Promise((r) => setTimeout(r, this.#intervalMs * attempt))
        }
      }
    }
  }
}

/** PostgreSQL text cannot hold NUL; it becomes U+FFFD rather than failing the row. */
function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text
}

function nullableStorable(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : storable(text)
}

/**
 * One INSERT per batch with one array parameter per column (`unnest`): far fewer parameters to
 * bind and parse than a multi-row VALUES list, which matters at thousands of rows a second.
 */
async function insertBatch(db: Db, batch: readonly Insert[]): Promise<void> {
  // `sql.param` binds the whole array as one parameter instead of expanding it into a list.
  const col = <T>(pick: (r: Insert) => T) => sql.param(batch.map(pick))
  await db.execute(sql`
    INSERT INTO query_audit_log (id, user_id, username, data_source_id, datasource_name,
      original_query, rewritten_query, policies_applied, execution_time_ms, client_info, status,
      error_message, created_at, chain_id, chain_seq, prev_hash, hash, shadow_policies,
      shadow_denied)
    SELECT * FROM unnest(
      ${col((r) => r.id)}::uuid[], ${col((r) => r.userId)}::uuid[], ${col((r) => r.username)}::text[],
      ${col((r) => r.dataSourceId)}::uuid[], ${col((r) => r.datasourceName)}::text[],
      ${col((r) => r.originalQuery)}::text[], ${col((r) => r.rewrittenQuery ?? null)}::text[],
      ${col((r) => r.policiesApplied ?? '[]')}::text[], ${col((r) => r.executionTimeMs ?? null)}::int[],
      ${col((r) => r.clientInfo ?? null)}::text[], ${col((r) => r.status)}::text[],
      ${col((r) => r.errorMessage ?? null)}::text[],
      ${col((r) => (r.createdAt as Date).toISOString())}::timestamptz[],
      ${col((r) => r.chainId ?? null)}::text[], ${col((r) => r.chainSeq ?? null)}::bigint[],
      ${col((r) => r.prevHash ?? null)}::text[], ${col((r) => r.hash ?? null)}::text[],
      ${col((r) => r.shadowPolicies ?? null)}::text[], ${col((r) => r.shadowDenied ?? null)}::boolean[])`)
}

/** Lists query-audit rows, newest first (docs/audit.md#reading-the-logs); default 50, cap 200. */
export async function listQueryAudit(
  db: Db,
  filter: QueryAuditFilter = {},
): Promise<Page<QueryAuditEntry>> {
  const { page, pageSize, offset } = resolvePage(filter, { size: 50, cap: 200 })
  const where = queryAuditWhere(filter)
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(queryAuditLog)
      .where(where)
      .orderBy(desc(queryAuditLog.createdAt), desc(queryAuditLog.id))
      .limit(pageSize)
      .offset(offset),
    countQueryAudit(db, filter),
  ])
  return { data: rows.map(toQueryAuditEntry), total, page, page_size: pageSize }
}

/** The filters of `GET /audit/queries` as one condition; 400 on a bad value. */
function queryAuditWhere(filter: QueryAuditFilter): SQL | undefined {
  if (filter.status !== undefined && !STATUSES.has(filter.status)) {
    throw invalidParameter('status', 'must be success, error or denied')
  }
  return and(
    uuidFilter('user_id', filter.user_id)
      ? eq(queryAuditLog.userId, filter.user_id as string)
      : undefined,
    uuidFilter('datasource_id', filter.datasource_id)
      ? eq(queryAuditLog.dataSourceId, filter.datasource_id as string)
      : undefined,
    filter.status ? eq(queryAuditLog.status, filter.status) : undefined,
    ...timeRange(queryAuditLog.createdAt, filter),
  )
}

type QueryAuditRow = typeof queryAuditLog.$inferSelect

function toQueryAuditEntry(r: QueryAuditRow): QueryAuditEntry {
  return {
    id: r.id,
    user_id: r.userId,
    username: r.username,
    data_source_id: r.dataSourceId,
    datasource_name: r.datasourceName,
    original_query: r.originalQuery,
    rewritten_query: r.rewrittenQuery,
    policies_applied: r.policiesApplied,
    execution_time_ms: r.executionTimeMs,
    client_info: r.clientInfo,
    status: r.status as QueryAuditEntry['status'],
    error_message: r.errorMessage,
    shadow_policies: r.shadowPolicies,
    shadow_denied: r.shadowDenied,
    created_at: r.createdAt.toISOString(),
  }
}

/** A query-audit entry as exported: with its hash-chain link (null for older entries). */
export type ExportedQueryAuditEntry = QueryAuditEntry & ExportedLink

/**
 * Every query-audit entry matching `filter`, oldest first, read in pages of `pageSize` by
 * (created_at, id), so an export of millions of rows holds one page at a time.
 */
export async function* exportQueryAudit(
  db: Db,
  filter: QueryAuditFilter = {},
  pageSize = 1000,
): AsyncGenerator<ExportedQueryAuditEntry> {
  const where = queryAuditWhere(filter)
  let after: { createdAt: Date; id: string } | undefined
  for (;;) {
    const rows = await db
      .select()
      .from(queryAuditLog)
      .where(
        and(
          where,
          after
            ? sql`(${queryAuditLog.createdAt}, ${queryAuditLog.id}) > (${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)`
            : undefined,
        ),
      )
      .orderBy(asc(queryAuditLog.createdAt), asc(queryAuditLog.id))
      .limit(pageSize)
    for (const r of rows) yield { ...toQueryAuditEntry(r), ...linkOf(r) }
    const last = rows.at(-1)
    if (!last || rows.length < pageSize) return
    after = { createdAt: last.createdAt, id: last.id }
  }
}

const HOUR = 3_600_000

/** `YYYY-MM-DD HH:MM:SS` in UTC, the form of the `bucket` column. */
export function bucketText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/**
 * The exact number of matching rows without scanning them all: whole UTC hours inside the
 * range come from `query_audit_counts`, the partial hours at either end are counted on the log.
 */
async function countQueryAudit(db: Db, filter: QueryAuditFilter): Promise<number> {
  const [fromCond, toCond] = [filter.from ?? filter.since, filter.to ?? filter.until]
  const lo = fromCond === undefined ? undefined : parseTime('from', fromCond)?.getTime()
  const hi = toCond === undefined ? undefined : parseTime('to', toCond)?.getTime()
  const eqs = (t: { userId: unknown; dataSourceId: unknown; status: unknown }) =>
    [
      filter.user_id ? sql`${t.userId} = ${filter.user_id}` : undefined,
      filter.datasource_id ? sql`${t.dataSourceId} = ${filter.datasource_id}` : undefined,
      filter.status ? sql`${t.status} = ${filter.status}` : undefined,
    ].filter((c): c is SQL => c !== undefined)
  const rawCount = async (
    start: number | undefined,
    end: number | undefined,
    endInclusive: boolean,
  ) => {
    const conds = [...eqs(queryAuditLog)]
    if (start !== undefined) conds.push(gte(queryAuditLog.createdAt, new Date(start)))
    if (end !== undefined) {
      conds.push(
        endInclusive
          ? lte(queryAuditLog.createdAt, new Date(end))
          : lt(queryAuditLog.createdAt, new Date(end)),
      )
    }
    const [row] = await db
      .select({ n: count() })
      .from(queryAuditLog)
      .where(and(...conds))
    return row?.n ?? 0
  }
  const fullStart = lo === undefined ? undefined : Math.ceil(lo / HOUR) * HOUR
  const fullEnd = hi === undefined ? undefined : Math.floor((hi + 1) / HOUR) * HOUR
  if (fullStart !== undefined && fullEnd !== undefined && fullStart >= fullEnd) {
    return rawCount(lo, hi, true)
  }
  const conds = eqs(queryAuditCounts)
  if (fullStart !== undefined)
    conds.push(sql`${queryAuditCounts.bucket} >= ${bucketText(fullStart)}`)
  if (fullEnd !== undefined) conds.push(sql`${queryAuditCounts.bucket} < ${bucketText(fullEnd)}`)
  const [sum] = await db
    .select({ n: sql<string | null>`sum(${queryAuditCounts.n})` })
    .from(queryAuditCounts)
    .where(and(...conds))
  let total = Number(sum?.n ?? 0)
  if (lo !== undefined && fullStart !== undefined && lo < fullStart)
    total += await rawCount(lo, fullStart, false)
  if (hi !== undefined && fullEnd !== undefined && fullEnd <= hi)
    total += await rawCount(fullEnd, hi, true)
  return total
}
