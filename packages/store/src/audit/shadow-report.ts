import { type SQL, sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import { entryAt } from './audit-chunk-format.js'
import { chunksById, chunkWhere, entryFilter, loadTexts } from './audit-chunk-reads.js'
import { invalidParameter, parseTime, type TimeInput } from './audit-filters.js'

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
  const window = entryFilter({ from: filter.from, to: filter.to })
  const bounds: SQL[] = [sql`e.sh IS NOT NULL`]
  if (window.from !== undefined) bounds.push(sql`e.at >= ${window.from}::bigint`)
  if (window.to !== undefined) bounds.push(sql`e.at <= ${window.to}::bigint`)
  // The entries with shadow records in the window, and which of their (shared) shadow texts name
  // the policy. The texts are fenced off (MATERIALIZED) so only shadow texts are read as JSON.
  const matched = sql`WITH e AS (
      SELECT c.id AS chunk, e.i, e.at, e.eid, c.p_user_id[e.p] AS user_id,
        c.p_username[e.p] AS username, c.texts[e.sh] AS digest, e.denied
      FROM query_audit_chunks c
      CROSS JOIN LATERAL unnest(c.e_at, c.e_id, c.e_principal, c.e_shadow, c.e_shadow_denied)
        WITH ORDINALITY AS e(at, eid, p, sh, denied, i)
      WHERE ${chunkWhere(window)} AND ${sql.join(bounds, sql` AND `)}
    ),
    s AS MATERIALIZED (
      SELECT t.digest, t.body FROM query_audit_texts t WHERE t.digest IN (SELECT digest FROM e)
    ),
    m AS (
      SELECT e.* FROM e WHERE e.digest IN (
        SELECT digest FROM s WHERE s.body::jsonb @> ${JSON.stringify([{ policy_id: policyId }])}::jsonb
      )
    )`
  const [users, picks] = await Promise.all([
    rowsOf<{ user_id: string; username: string; statements: number; would_deny: number }>(
      db.execute(sql`${matched}
        SELECT user_id::text AS user_id, max(username) AS username, count(*)::int AS statements,
          (count(*) FILTER (WHERE denied))::int AS would_deny
        FROM m GROUP BY user_id ORDER BY count(*) DESC, user_id`),
    ),
    limit === 0
      ? Promise.resolve([])
      : rowsOf<{ chunk: string; i: number }>(
          db.execute(sql`${matched}
            SELECT chunk::text AS chunk, i::int AS i FROM m ORDER BY at DESC, eid DESC
            LIMIT ${limit}`),
        ),
  ])
  const chunks = new Map(
    (
      await chunksById(
        db,
        picks.map((p) => p.chunk),
      )
    ).map((c) => [c.id, c]),
  )
  const texts = await loadTexts(
    db,
    picks.map((p) => {
      const row = chunks.get(p.chunk)
      const slot = row?.e_original[Number(p.i) - 1]
      return row && slot ? (row.texts[slot - 1] ?? null) : null
    }),
  )
  const examples: ShadowReport['examples'] = []
  for (const p of picks) {
    const row = chunks.get(p.chunk)
    if (!row) continue
    const e = entryAt(row, Number(p.i) - 1, (d) => texts.get(d))
    examples.push({
      id: e.id,
      created_at: e.createdAt.toISOString(),
      username: e.username,
      datasource_name: e.datasourceName,
      original_query: e.originalQuery,
      would_deny: e.shadowDenied === true,
    })
  }
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
    examples,
  }
}
