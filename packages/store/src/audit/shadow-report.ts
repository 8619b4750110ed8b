import { sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { entryAt } from './audit-chunk-format.js'
import {
  CHUNK_HEAD,
  type ChunkHead,
  chunkRows,
  chunksById,
  chunkWhere,
  entryFilter,
  entryMatches,
  loadTexts,
} from './audit-chunk-reads.js'
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
  /** Shadow texts seen so far: whether each names the policy. */
  const names = new Map<string, boolean>()
  const users = new Map<string, ShadowReport['users'][number]>()
  /** The newest matched entries, newest first, at most `limit`. */
  const picks: { chunk: string; i: number; at: number; id: string }[] = []
  let after: { first_at: number; id: string } | undefined
  for (;;) {
    const heads = await chunkRows<ChunkHead>(
      db,
      sql`SELECT ${CHUNK_HEAD} AS j FROM query_audit_chunks c WHERE ${chunkWhere(window)}
        ${after ? sql`AND (c.first_at, c.id) > (${after.first_at}::bigint, ${after.id}::uuid)` : sql``}
        ORDER BY c.first_at, c.id LIMIT ${REPORT_CHUNKS}`,
    )
    const digestOf = (head: ChunkHead, i: number) => {
      const slot = head.e_shadow[i]
      return slot ? (head.texts[slot - 1] ?? null) : null
    }
    const unseen = new Set<string>()
    for (const head of heads) {
      for (let i = 0; i < head.entries; i++) {
        const digest = digestOf(head, i)
        if (digest && !names.has(digest)) unseen.add(digest)
      }
    }
    for (const [digest, body] of await loadTexts(db, unseen)) {
      names.set(digest, namesPolicy(body, policyId))
    }
    for (const head of heads) {
      for (let i = 0; i < head.entries; i++) {
        const digest = digestOf(head, i)
        if (!digest || !names.get(digest) || !entryMatches(head, i, window)) continue
        const p = (head.e_principal[i] as number) - 1
        const userId = head.p_user_id[p] as string
        const username = head.p_username[p] as string
        const user = users.get(userId) ?? {
          user_id: userId,
          username,
          statements: 0,
          would_deny: 0,
        }
        users.set(userId, user)
        if (username > user.username) user.username = username
        user.statements++
        if (head.e_shadow_denied[i] === true) user.would_deny++
        keepNewest(picks, limit, {
          chunk: head.id,
          i,
          at: head.e_at[i] as number,
          id: head.e_id[i] as string,
        })
      }
    }
    const last = heads.at(-1)
    if (!last || heads.length < REPORT_CHUNKS) break
    after = { first_at: last.first_at, id: last.id }
  }
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
      const slot = row?.e_original[p.i]
      return row && slot ? (row.texts[slot - 1] ?? null) : null
    }),
  )
  const examples: ShadowReport['examples'] = []
  for (const p of picks) {
    const row = chunks.get(p.chunk)
    if (!row) continue
    const e = entryAt(row, p.i, (d) => texts.get(d))
    examples.push({
      id: e.id,
      created_at: e.createdAt.toISOString(),
      username: e.username,
      datasource_name: e.datasourceName,
      original_query: e.originalQuery,
      would_deny: e.shadowDenied === true,
    })
  }
  const byUser = [...users.values()].sort(
    (a, b) =>
      b.statements - a.statements || (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0),
  )
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

/** Batches read per round trip. */
const REPORT_CHUNKS = 200

/** Whether a shadow record (a JSON array of the shadow policies that matched) names `policyId`. */
function namesPolicy(body: string, policyId: string): boolean {
  try {
    const matched: unknown = JSON.parse(body)
    return (
      Array.isArray(matched) &&
      matched.some((m) => typeof m === 'object' && m !== null && m.policy_id === policyId)
    )
  } catch {
    return false
  }
}

/** Adds `pick` to `picks` (newest first by time, then id) if it is among the `limit` newest. */
function keepNewest<T extends { at: number; id: string }>(
  picks: T[],
  limit: number,
  pick: T,
): void {
  const newer = (a: T, b: T) => a.at > b.at || (a.at === b.at && a.id > b.id)
  if (limit === 0) return
  if (picks.length === limit && !newer(pick, picks[limit - 1] as T)) return
  let at = picks.length
  while (at > 0 && newer(pick, picks[at - 1] as T)) at--
  picks.splice(at, 0, pick)
  if (picks.length > limit) picks.pop()
}
