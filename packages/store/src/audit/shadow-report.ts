import { and, count, desc, type SQL, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { queryAuditLog } from '../tables.js'
import { invalidParameter, parseTime, type TimeInput, timeRange } from './audit-filters.js'

/** Window of `GET /policies/{id}/shadow-report`. */
export interface ShadowReportFilter {
  from?: TimeInput
  to?: TimeInput
  /** Example statements to return, newest first (default 10, at most 100). */
  examples?: number
}

/** What a shadow policy would have done over a window of the query audit. */
export interface ShadowReport {
  policy_id: string
  from: string | null
  to: string | null
  /** Statements the policy matched (its targets met a table they read). */
  statements: number
  /** Of those, statements that enforcing the shadow policies would have refused. */
  would_deny: number
  users: { user_id: string; username: string; statements: number; would_deny: number }[]
  examples: {
    id: string
    created_at: string
    username: string
    datasource_name: string
    original_query: string
    would_deny: boolean
  }[]
}

/**
 * Reads the query audit's shadow records for one policy (docs/policies.md, "Shadow mode"): the
 * statements it matched, the users they came from, and which ones it would have refused.
 */
export async function shadowReport(
  db: Db,
  policyId: string,
  filter: ShadowReportFilter = {},
): Promise<ShadowReport> {
  const limit = filter.examples ?? 10
  if (!Number.isInteger(limit) || limit < 0 || limit > 100) {
    throw invalidParameter('examples', 'must be an integer from 0 to 100')
  }
  const matches: SQL = sql`${queryAuditLog.shadowPolicies} IS NOT NULL AND ${queryAuditLog.shadowPolicies}::jsonb @> ${JSON.stringify([{ policy_id: policyId }])}::jsonb`
  const where = and(matches, ...timeRange(queryAuditLog.createdAt, filter))
  const denied = sql<number>`count(*) FILTER (WHERE ${queryAuditLog.shadowDenied})`
  const [users, examples] = await Promise.all([
    db
      .select({
        user_id: queryAuditLog.userId,
        username: sql<string>`max(${queryAuditLog.username})`,
        statements: count(),
        would_deny: denied,
      })
      .from(queryAuditLog)
      .where(where)
      .groupBy(queryAuditLog.userId)
      .orderBy(desc(count()), queryAuditLog.userId),
    db
      .select({
        id: queryAuditLog.id,
        created_at: queryAuditLog.createdAt,
        username: queryAuditLog.username,
        datasource_name: queryAuditLog.datasourceName,
        original_query: queryAuditLog.originalQuery,
        would_deny: queryAuditLog.shadowDenied,
      })
      .from(queryAuditLog)
      .where(where)
      .orderBy(desc(queryAuditLog.createdAt), desc(queryAuditLog.id))
      .limit(limit),
  ])
  const byUser = users.map((u) => ({
    ...u,
    statements: Number(u.statements),
    would_deny: Number(u.would_deny),
  }))
  return {
    policy_id: policyId,
    from: parseTime('from', filter.from)?.toISOString() ?? null,
    to: parseTime('to', filter.to)?.toISOString() ?? null,
    statements: byUser.reduce((n, u) => n + u.statements, 0),
    would_deny: byUser.reduce((n, u) => n + u.would_deny, 0),
    users: byUser,
    examples: examples.map((e) => ({
      ...e,
      created_at: e.created_at.toISOString(),
      would_deny: e.would_deny === true,
    })),
  }
}
