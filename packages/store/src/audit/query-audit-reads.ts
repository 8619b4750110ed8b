// Reading the query audit: lists, exports and counts with their filters.
import { and, asc, count, desc, eq, gte, lt, lte, type SQL, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { queryAuditCounts, queryAuditLog } from '../tables.js'
import { type ExportedLink, linkOf } from './audit-chain.js'
import {
  invalidParameter,
  parseTime,
  type TimeInput,
  timeRange,
  uuidFilter,
} from './audit-filters.js'

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

const STATUSES = new Set(['success', 'error', 'denied'])

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
export async function countQueryAudit(db: Db, filter: QueryAuditFilter): Promise<number> {
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
