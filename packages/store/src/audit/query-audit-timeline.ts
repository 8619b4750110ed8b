import { and, type SQL, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { queryAuditCounts } from '../tables.js'
import { invalidParameter, parseTime, type TimeInput, uuidFilter } from './audit-filters.js'
import { bucketText } from './query-audit-reads.js'

/** Filters of `GET /audit/queries/timeline`. */
export interface QueryAuditTimelineFilter {
  user_id?: string
  datasource_id?: string
  /** Start of the window; default 24 hours before `to`. Rounded down to the hour. */
  from?: TimeInput
  /** End of the window (inclusive); default now. */
  to?: TimeInput
}

/** One UTC hour of the query audit. */
export interface QueryAuditBucket {
  start: string
  success: number
  error: number
  denied: number
}

/** Statements per hour and status, every hour of the window present (zeros included). */
export interface QueryAuditTimeline {
  bucket_seconds: number
  from: string
  to: string
  buckets: QueryAuditBucket[]
}

const HOUR = 3_600_000
/** 93 days of hours: a quarter, and a bound on the response size. */
export const MAX_TIMELINE_BUCKETS = 24 * 93

/**
 * Counts statements per hour from the hourly roll-up the writer keeps (`query_audit_counts`),
 * so a chart over months reads a few thousand rows, never the log itself.
 */
export async function queryAuditTimeline(
  db: Db,
  filter: QueryAuditTimelineFilter = {},
): Promise<QueryAuditTimeline> {
  const to = parseTime('to', filter.to) ?? new Date()
  const from = parseTime('from', filter.from) ?? new Date(to.getTime() - 23 * HOUR)
  if (from > to) throw invalidParameter('from', 'is later than to')
  const first = Math.floor(from.getTime() / HOUR) * HOUR
  const last = Math.floor(to.getTime() / HOUR) * HOUR
  const count = (last - first) / HOUR + 1
  if (count > MAX_TIMELINE_BUCKETS) {
    throw invalidParameter('from', `spans more than ${MAX_TIMELINE_BUCKETS} hours`)
  }
  const conds: SQL[] = [
    sql`${queryAuditCounts.bucket} >= ${bucketText(first)}`,
    sql`${queryAuditCounts.bucket} <= ${bucketText(last)}`,
  ]
  if (uuidFilter('user_id', filter.user_id)) {
    conds.push(sql`${queryAuditCounts.userId} = ${filter.user_id}`)
  }
  if (uuidFilter('datasource_id', filter.datasource_id)) {
    conds.push(sql`${queryAuditCounts.dataSourceId} = ${filter.datasource_id}`)
  }
  const rows = await db
    .select({
      bucket: queryAuditCounts.bucket,
      status: queryAuditCounts.status,
      n: sql<string>`sum(${queryAuditCounts.n})`,
    })
    .from(queryAuditCounts)
    .where(and(...conds))
    .groupBy(queryAuditCounts.bucket, queryAuditCounts.status)
  const buckets: QueryAuditBucket[] = Array.from({ length: count }, (_, i) => ({
    start: new Date(first + i * HOUR).toISOString(),
    success: 0,
    error: 0,
    denied: 0,
  }))
  for (const row of rows) {
    const at = Date.parse(`${row.bucket.replace(' ', 'T')}Z`)
    const bucket = buckets[(at - first) / HOUR]
    if (bucket && (row.status === 'success' || row.status === 'error' || row.status === 'denied')) {
      bucket[row.status] += Number(row.n)
    }
  }
  return {
    bucket_seconds: HOUR / 1000,
    from: new Date(first).toISOString(),
    to: to.toISOString(),
    buckets,
  }
}
