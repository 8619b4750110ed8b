// Reading query-audit batches (audit-chunk-format.ts): filters, pruning, texts.
import { type SQL, sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import { type ChunkRow, decodeChunk, STATUS_CODES, type StoredEntry } from './audit-chunk-format.js'
import { invalidParameter, oneOf, parseTime, type TimeInput, uuidFilter } from './audit-filters.js'

/** The filters of the query audit, checked and in stored units (ms since the epoch, codes). */
export interface EntryFilter {
  userId?: string
  dataSourceId?: string
  /** `e_status` code. */
  status?: number
  /** Inclusive bounds, ms since the epoch. */
  from?: number
  to?: number
}

const STATUS_BY_NAME: Record<string, number> = STATUS_CODES

/**
 * Checks the filters of `GET /audit/queries` (docs/audit.md#reading-the-logs): a 400 for an
 * unknown status, a malformed id or date, `from` later than `to`, or two spellings with
 * different values.
 */
export function entryFilter(input: {
  user_id?: string | undefined
  datasource_id?: string | undefined
  status?: string | undefined
  from?: TimeInput | undefined
  to?: TimeInput | undefined
  since?: TimeInput | undefined
  until?: TimeInput | undefined
}): EntryFilter {
  if (input.status !== undefined && !Object.hasOwn(STATUS_BY_NAME, input.status)) {
    throw invalidParameter('status', 'must be success, error or denied')
  }
  const userId = uuidFilter('user_id', input.user_id)
  const dataSourceId = uuidFilter('datasource_id', input.datasource_id)
  const from = parseTime('from', oneOf(['from', input.from], ['since', input.since]))
  const to = parseTime('to', oneOf(['to', input.to], ['until', input.until]))
  if (from && to && from > to) throw invalidParameter('from', 'is later than to')
  const filter: EntryFilter = {}
  if (userId) filter.userId = userId.toLowerCase()
  if (dataSourceId) filter.dataSourceId = dataSourceId.toLowerCase()
  if (input.status) filter.status = STATUS_BY_NAME[input.status] as number
  if (from) filter.from = from.getTime()
  if (to) filter.to = to.getTime()
  return filter
}

/**
 * The principals of batch `c` that can match `filter`, as 1-based positions: those of its user
 * (or else its datasource), found by one array search rather than a test per principal (a batch
 * of many users is checked in one step).
 */
export function principalPositions(filter: Pick<EntryFilter, 'userId' | 'dataSourceId'>): SQL {
  if (filter.userId) return sql`unnest(array_positions(c.p_user_id, ${filter.userId}::uuid))`
  if (filter.dataSourceId) {
    return sql`unnest(array_positions(c.p_ds_id, ${filter.dataSourceId}::uuid))`
  }
  return sql`generate_subscripts(c.p_user_id, 1)`
}

/**
 * The batches that may hold an entry matching `filter`, by their batch-level columns only (the
 * alias of `query_audit_chunks` is `c`): time span, principals, statuses.
 */
export function chunkWhere(filter: EntryFilter): SQL {
  const conds: SQL[] = [sql`true`]
  if (filter.from !== undefined) conds.push(sql`c.last_at >= ${filter.from}::bigint`)
  if (filter.to !== undefined) conds.push(sql`c.first_at <= ${filter.to}::bigint`)
  if (filter.userId) conds.push(sql`c.p_user_id @> ARRAY[${filter.userId}::uuid]`)
  if (filter.dataSourceId) conds.push(sql`c.p_ds_id @> ARRAY[${filter.dataSourceId}::uuid]`)
  if (filter.status !== undefined) {
    conds.push(sql`(c.status_mask & ${1 << filter.status}::smallint) <> 0`)
  }
  if (filter.status !== undefined && (filter.userId || filter.dataSourceId)) {
    // Format 3 counts its entries per principal and status: a batch where the user's (or
    // datasource's) entries never have that status is skipped without reading its entries.
    const principal: SQL[] = [sql`c.p_counts[(q.i - 1) * 3 + ${filter.status + 1}::int] > 0`]
    if (filter.userId) principal.push(sql`c.p_user_id[q.i] = ${filter.userId}::uuid`)
    if (filter.dataSourceId) principal.push(sql`c.p_ds_id[q.i] = ${filter.dataSourceId}::uuid`)
    conds.push(sql`(c.format <> 3 OR EXISTS (SELECT 1 FROM ${principalPositions(filter)} AS q(i)
      WHERE ${sql.join(principal, sql` AND `)}))`)
  }
  return sql.join(conds, sql` AND `)
}

/**
 * The columns entry filters, ordering, counts and the shadow report read: a batch row without
 * its literals and the texts' bodies.
 */
export type ChunkHead = Pick<
  ChunkRow,
  | 'id'
  | 'format'
  | 'first_at'
  | 'last_at'
  | 'entries'
  | 'p_user_id'
  | 'p_username'
  | 'p_ds_id'
  | 'texts'
  | 'e_id'
  | 'e_at'
  | 'e_principal'
  | 'e_status'
  | 'e_shadow'
  | 'e_shadow_denied'
>

/** `json_build_object` of the ChunkHead columns of `c` (format 3: its packed entries). */
export const CHUNK_HEAD = sql.raw(
  `json_build_object('id', c.id, 'format', c.format, 'first_at', c.first_at,
    'last_at', c.last_at, 'entries', c.entries, 'p_user_id', c.p_user_id,
    'p_username', c.p_username, 'p_ds_id', c.p_ds_id, 'texts', c.texts, 'e_data', c.e_data,
    'e_id', c.e_id, 'e_at', c.e_at, 'e_principal', c.e_principal, 'e_status', c.e_status,
    'e_shadow', c.e_shadow, 'e_shadow_denied', c.e_shadow_denied)::text`,
)

/** Whether entry `i` of a batch matches `filter`. */
export function entryMatches(row: ChunkHead, i: number, filter: EntryFilter): boolean {
  const at = row.e_at[i] as number
  if (filter.from !== undefined && at < filter.from) return false
  if (filter.to !== undefined && at > filter.to) return false
  if (filter.status !== undefined && row.e_status[i] !== filter.status) return false
  if (filter.userId || filter.dataSourceId) {
    const p = (row.e_principal[i] as number) - 1
    if (filter.userId && row.p_user_id[p] !== filter.userId) return false
    if (filter.dataSourceId && row.p_ds_id[p] !== filter.dataSourceId) return false
  }
  return true
}

/**
 * Batch rows of a query selecting each as one JSON text column `j` (`row_to_json` or
 * CHUNK_HEAD), parsed, with the entry arrays of packed batches filled (decodeChunk).
 */
export async function chunkRows<T extends Partial<ChunkRow>>(db: Db, query: SQL): Promise<T[]> {
  return (await storedChunkRows<ChunkRow>(db, query)).map((r) => decodeChunk(r) as unknown as T)
}

/** As chunkRows, with packed batches left as stored (verify decodes them one by one). */
export async function storedChunkRows<T extends Partial<ChunkRow>>(
  db: Db,
  query: SQL,
): Promise<T[]> {
  const rows = await rowsOf<{ j: string }>(db.execute(query))
  return rows.map((r) => JSON.parse(r.j) as T)
}

/** A PostgreSQL array literal of uuids (ids never need quoting). */
export function uuidArray(ids: Iterable<string>): string {
  return `{${[...ids].join(',')}}`
}

/** The full rows of the batches `ids`, in no particular order. */
export async function chunksById(db: Db, ids: Iterable<string>): Promise<ChunkRow[]> {
  const list = uuidArray(new Set(ids))
  if (list === '{}') return []
  return chunkRows<ChunkRow>(
    db,
    sql`SELECT row_to_json(c)::text AS j FROM query_audit_chunks c WHERE c.id = ANY(${list}::uuid[])`,
  )
}

/** Adds the bodies of `digests` missing from `into` (one query); a digest without a body stays missing. */
export async function loadTexts(
  db: Db,
  digests: Iterable<string | null>,
  into: Map<string, string> = new Map(),
): Promise<Map<string, string>> {
  const wanted = new Set<string>()
  for (const d of digests) if (d && !into.has(d)) wanted.add(d)
  if (wanted.size === 0) return into
  const rows = await rowsOf<{ digest: string; body: string }>(
    db.execute(
      sql`SELECT digest::text AS digest, body FROM query_audit_texts WHERE digest = ANY(${uuidArray(wanted)}::uuid[])`,
    ),
  )
  for (const r of rows) into.set(r.digest, r.body)
  return into
}

/** The digests entry `i` of `row` refers to. */
export function entryDigests(row: ChunkRow, i: number): (string | null)[] {
  const slots = [
    row.e_original[i],
    row.e_rewritten[i],
    row.e_policies[i],
    row.e_error[i],
    row.e_shadow[i],
  ]
  return slots.map((s) => (s ? (row.texts[s - 1] ?? null) : null))
}

/** A stored entry as the admin API shows it (docs/audit.md#fields). */
export function entryFields(e: StoredEntry) {
  return {
    id: e.id,
    user_id: e.userId,
    username: e.username,
    data_source_id: e.dataSourceId,
    datasource_name: e.datasourceName,
    original_query: e.originalQuery,
    rewritten_query: e.rewrittenQuery,
    policies_applied: e.policiesApplied,
    execution_time_ms: e.executionTimeMs,
    client_info: e.clientInfo,
    status: e.status,
    error_message: e.errorMessage,
    shadow_policies: e.shadowPolicies,
    shadow_denied: e.shadowDenied,
    created_at: e.createdAt.toISOString(),
  }
}
