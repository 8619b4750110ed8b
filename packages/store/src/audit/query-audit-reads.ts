// Reading the query audit: lists, exports and counts with their filters, over the stored
// batches (audit-chunk-format.ts): batches are pruned in SQL by their batch-level columns,
// entries are filtered and ordered here.
import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import type { ExportedLink } from './audit-chain.js'
import { type ChunkRow, entryAt, entryHash, STATUS_NAMES } from './audit-chunk-format.js'
import {
  CHUNK_HEAD,
  type ChunkHead,
  chunkRows,
  chunksById,
  chunkWhere,
  type EntryFilter,
  entryDigests,
  entryFields,
  entryFilter,
  entryMatches,
  loadTexts,
  principalPositions,
  uuidArray,
} from './audit-chunk-reads.js'
import type { TimeInput } from './audit-filters.js'

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

/** Batches read per round trip while walking the log. */
const WALK_CHUNKS = 50

/** One matching entry found while walking: its batch, index, time and id. */
interface EntryRef {
  chunk: string
  i: number
  at: number
  id: string
}

const newestFirst = (a: EntryRef, b: EntryRef) =>
  b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/** Lists query-audit rows, newest first (docs/audit.md#reading-the-logs); default 50, cap 200. */
export async function listQueryAudit(
  db: Db,
  filter: QueryAuditFilter = {},
): Promise<Page<QueryAuditEntry>> {
  const { page, pageSize, offset } = resolvePage(filter, { size: 50, cap: 200 })
  const f = entryFilter(filter)
  const need = offset + pageSize
  const [total, newest] = await Promise.all([countEntries(db, f), newestEntries(db, f, need)])
  const slice = newest.slice(offset, need)
  const chunks = new Map(
    (
      await chunksById(
        db,
        slice.map((r) => r.chunk),
      )
    ).map((c) => [c.id, c]),
  )
  const digests: (string | null)[] = []
  for (const r of slice) {
    const row = chunks.get(r.chunk)
    if (row) digests.push(...entryDigests(row, r.i))
  }
  const texts = await loadTexts(db, digests)
  const data: QueryAuditEntry[] = []
  for (const r of slice) {
    const row = chunks.get(r.chunk)
    if (row) data.push(entryFields(entryAt(row, r.i, (d) => texts.get(d))))
  }
  return { data, total, page, page_size: pageSize }
}

/**
 * The `need` newest entries matching `filter`, newest first. Batches are walked by their newest
 * entry (`last_at`), newest first: batches of several writers overlap in time, and a batch can
 * hold an entry newer than one already found only while its `last_at` is not older than it.
 */
async function newestEntries(db: Db, filter: EntryFilter, need: number): Promise<EntryRef[]> {
  const refs: EntryRef[] = []
  /** The time of the `need`-th newest entry found so far. */
  let oldest = Number.NEGATIVE_INFINITY
  let after: { id: string; last_at: number } | undefined
  /** Batches read per round trip: few at first (a page is usually in one or two). */
  let batch = 2
  for (;;) {
    // The order is read on the narrow columns only; entries are read for the batches needed.
    const order = await rowsOf<{ id: string; last_at: string | number }>(
      db.execute(sql`SELECT c.id::text AS id, c.last_at FROM query_audit_chunks c
        WHERE ${chunkWhere(filter)}
        ${after ? sql`AND (c.last_at, c.id) < (${after.last_at}::bigint, ${after.id}::uuid)` : sql``}
        ORDER BY c.last_at DESC, c.id DESC LIMIT ${WALK_CHUNKS}`),
    )
    for (let at = 0; at < order.length; at += batch, batch = Math.min(batch * 2, 16)) {
      const next = order
        .slice(at, at + batch)
        .map((o) => ({ id: o.id, last_at: Number(o.last_at) }))
      if (refs.length >= need && (next[0]?.last_at ?? 0) < oldest) return refs
      const heads = new Map(
        (
          await chunkRows<ChunkHead>(
            db,
            sql`SELECT ${CHUNK_HEAD} AS j FROM query_audit_chunks c
              WHERE c.id = ANY(${uuidArray(next.map((o) => o.id))}::uuid[])`,
          )
        ).map((h) => [h.id, h]),
      )
      for (const o of next) {
        const head = heads.get(o.id)
        if (!head) continue
        if (refs.length >= need && head.last_at < oldest) return refs
        for (let i = 0; i < head.e_at.length; i++) {
          if (entryMatches(head, i, filter)) {
            refs.push({ chunk: head.id, i, at: head.e_at[i] as number, id: head.e_id[i] as string })
          }
        }
        if (refs.length >= need) {
          refs.sort(newestFirst)
          refs.length = need
          oldest = (refs[need - 1] as EntryRef).at
        }
      }
    }
    const last = order.at(-1)
    if (!last || order.length < WALK_CHUNKS) break
    after = { id: last.id, last_at: Number(last.last_at) }
  }
  refs.sort(newestFirst)
  return refs
}

/** A query-audit entry as exported: with its hash-chain link (null for older entries). */
export type ExportedQueryAuditEntry = QueryAuditEntry & ExportedLink

/** A batch being exported: its matching entries in time order, and its entries' links. */
interface ExportCursor {
  row: ChunkRow
  /** Indexes of the matching entries, oldest first; `pos` is the next to export. */
  order: number[]
  pos: number
  /** Format 1: the link of the chain's entry before this batch ('' for the first). */
  before: string | null
  /** Format 2: entry hashes computed so far. */
  hashes: (string | undefined)[]
}

/** Distinct texts kept while exporting before those no batch in hand refers to are dropped. */
const EXPORT_TEXTS = 50_000

/**
 * Every query-audit entry matching `filter`, oldest first, each with its hash-chain link.
 * Batches are read in pages of `chunksPerPage` by their oldest entry (`first_at`, the index):
 * an entry is exported once no batch still unread can hold an older one, so an export of
 * millions of entries holds only the batches that overlap the current point in time.
 */
export async function* exportQueryAudit(
  db: Db,
  filter: QueryAuditFilter = {},
  chunksPerPage = 20,
): AsyncGenerator<ExportedQueryAuditEntry> {
  const f = entryFilter(filter)
  const texts = new Map<string, string>()
  const lookup = (d: string) => texts.get(d)
  let pending: ChunkRow[] = []
  let active: ExportCursor[] = []
  let after: ChunkRow | undefined
  let exhausted = false
  const fetchPage = async () => {
    const rows = await chunkRows<ChunkRow>(
      db,
      // The page is chosen on the narrow columns, so only its own rows are turned into JSON.
      sql`SELECT row_to_json(c)::text AS j FROM (
          SELECT c.id, c.first_at FROM query_audit_chunks c WHERE ${chunkWhere(f)}
          ${after ? sql`AND (c.first_at, c.id) > (${after.first_at}::bigint, ${after.id}::uuid)` : sql``}
          ORDER BY c.first_at, c.id LIMIT ${chunksPerPage}
        ) k JOIN query_audit_chunks c ON c.id = k.id ORDER BY k.first_at, k.id`,
    )
    after = rows.at(-1)
    if (rows.length < chunksPerPage) exhausted = true
    if (texts.size > EXPORT_TEXTS) {
      const keep = new Set<string | null>()
      for (const c of active) for (const d of c.row.texts) keep.add(d)
      for (const d of texts.keys()) if (!keep.has(d)) texts.delete(d)
    }
    await loadTexts(
      db,
      rows.flatMap((r) => r.texts),
      texts,
    )
    pending = rows
    return legacyHeads(db, rows)
  }
  let heads = new Map<string, string | null>()
  for (;;) {
    if (pending.length === 0 && !exhausted) heads = await fetchPage()
    const next = pending[0]
    // No batch still unread holds an entry older than its own first_at.
    const bound = next ? next.first_at : Number.POSITIVE_INFINITY
    for (;;) {
      let best: ExportCursor | undefined
      let bestAt = 0
      let bestId = ''
      for (const c of active) {
        const i = c.order[c.pos] as number
        const at = c.row.e_at[i] as number
        const id = c.row.e_id[i] as string
        if (!best || at < bestAt || (at === bestAt && id < bestId)) {
          best = c
          bestAt = at
          bestId = id
        }
      }
      if (!best || bestAt >= bound) break
      const i = best.order[best.pos++] as number
      yield exported(best, i, lookup)
      if (best.pos >= best.order.length) active = active.filter((c) => c !== best)
    }
    if (!next) {
      if (exhausted && pending.length === 0) return
      continue
    }
    pending.shift()
    const order: number[] = []
    for (let i = 0; i < next.e_at.length; i++) if (entryMatches(next, i, f)) order.push(i)
    if (order.length === 0) continue
    order.sort(
      (a, b) =>
        (next.e_at[a] as number) - (next.e_at[b] as number) ||
        ((next.e_id[a] as string) < (next.e_id[b] as string) ? -1 : 1),
    )
    active.push({ row: next, order, pos: 0, before: heads.get(next.id) ?? null, hashes: [] })
  }
}

/** Entry `i` of a batch being exported, with its link. */
function exported(
  c: ExportCursor,
  i: number,
  lookup: (digest: string) => string | undefined,
): ExportedQueryAuditEntry {
  const { row } = c
  const entry = entryAt(row, i, lookup)
  const base = entryFields(entry)
  if (row.chain_id === null) {
    return { ...base, chain_id: null, chain_seq: entry.chainSeq, prev_hash: null, hash: null }
  }
  if (row.format === 1) {
    const links = row.e_hash ?? []
    return {
      ...base,
      chain_id: row.chain_id,
      chain_seq: entry.chainSeq,
      prev_hash: i === 0 ? c.before : (links[i - 1] ?? null),
      hash: links[i] ?? null,
    }
  }
  const hashOf = (k: number): string => {
    let h = c.hashes[k]
    if (h === undefined) {
      h = k === i ? entryHash(entry) : entryHash(entryAt(row, k, lookup))
      c.hashes[k] = h
    }
    return h
  }
  return {
    ...base,
    chain_id: row.chain_id,
    chain_seq: entry.chainSeq,
    prev_hash: i === 0 ? row.prev_hash : hashOf(i - 1),
    hash: hashOf(i),
  }
}

/**
 * Format 1 batches carry no link to the batch before them: the link of their first entry's
 * predecessor is the last `e_hash` of the chain's previous batch ('' for a chain's first entry).
 */
async function legacyHeads(db: Db, rows: ChunkRow[]): Promise<Map<string, string | null>> {
  const heads = new Map<string, string | null>()
  const ask: string[] = []
  for (const r of rows) {
    if (r.format !== 1 || r.chain_id === null) continue
    if (r.first_seq === 1) heads.set(r.id, '')
    else ask.push(r.id)
  }
  if (ask.length === 0) return heads
  const found = await rowsOf<{ id: string; h: string | null }>(
    db.execute(sql`SELECT c.id::text AS id,
        (SELECT p.e_hash[p.entries] FROM query_audit_chunks p
          WHERE p.chain_id = c.chain_id AND p.first_seq < c.first_seq
          ORDER BY p.first_seq DESC LIMIT 1) AS h
      FROM query_audit_chunks c WHERE c.id = ANY(${uuidArray(ask)}::uuid[])`),
  )
  for (const r of found) heads.set(r.id, r.h)
  return heads
}

const HOUR = 3_600_000

/** `YYYY-MM-DD HH:MM:SS` in UTC, the form of the `bucket` column. */
export function bucketText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/**
 * The exact number of matching rows without scanning them all: whole UTC hours inside the
 * range come from `query_audit_counts`, the partial hours at either end are counted on the
 * batches that overlap them.
 */
export async function countQueryAudit(db: Db, filter: QueryAuditFilter): Promise<number> {
  return countEntries(db, entryFilter(filter))
}

async function countEntries(db: Db, filter: EntryFilter): Promise<number> {
  const lo = filter.from
  const hi = filter.to
  const fullStart = lo === undefined ? undefined : Math.ceil(lo / HOUR) * HOUR
  const fullEnd = hi === undefined ? undefined : Math.floor((hi + 1) / HOUR) * HOUR
  if (fullStart !== undefined && fullEnd !== undefined && fullStart >= fullEnd) {
    return countInChunks(db, filter, lo as number, hi as number)
  }
  const conds = [sql`true`]
  if (filter.userId) conds.push(sql`user_id = ${filter.userId}::uuid`)
  if (filter.dataSourceId) conds.push(sql`data_source_id = ${filter.dataSourceId}::uuid`)
  if (filter.status !== undefined) conds.push(sql`status = ${STATUS_NAMES[filter.status]}`)
  if (fullStart !== undefined) conds.push(sql`bucket >= ${bucketText(fullStart)}::timestamp`)
  if (fullEnd !== undefined) conds.push(sql`bucket < ${bucketText(fullEnd)}::timestamp`)
  const [sum] = await rowsOf<{ n: string | number | null }>(
    db.execute(
      sql`SELECT sum(n)::text AS n FROM query_audit_counts WHERE ${sql.join(conds, sql` AND `)}`,
    ),
  )
  let total = Number(sum?.n ?? 0)
  if (lo !== undefined && fullStart !== undefined && lo < fullStart) {
    total += await countInChunks(db, filter, lo, fullStart - 1)
  }
  if (hi !== undefined && fullEnd !== undefined && fullEnd <= hi) {
    total += await countInChunks(db, filter, fullEnd, hi)
  }
  return total
}

/** Batches read per round trip while counting entries one by one. */
const COUNT_CHUNKS = 200

/**
 * Entries matching `filter` from `from` to `to` (ms, inclusive), counted on the batches: those
 * wholly inside the span by their per-principal counts (format 3) in SQL, the others (at the
 * span's edges, or of earlier formats) entry by entry.
 */
async function countInChunks(
  db: Db,
  filter: EntryFilter,
  from: number,
  to: number,
): Promise<number> {
  const within: EntryFilter = { ...filter, from, to }
  const inside = sql`c.format = 3 AND c.first_at >= ${from}::bigint AND c.last_at <= ${to}::bigint`
  const principal = [sql`true`]
  if (filter.userId) principal.push(sql`c.p_user_id[p.i] = ${filter.userId}::uuid`)
  if (filter.dataSourceId) principal.push(sql`c.p_ds_id[p.i] = ${filter.dataSourceId}::uuid`)
  const statuses = filter.status === undefined ? [0, 1, 2] : [filter.status]
  const [summed] = await rowsOf<{ n: string | null }>(
    db.execute(
      principal.length === 1 && filter.status === undefined
        ? sql`SELECT sum(c.entries)::text AS n FROM query_audit_chunks c
            WHERE ${chunkWhere(within)} AND ${inside}`
        : sql`SELECT sum(c.p_counts[(p.i - 1) * 3 + s.s + 1])::text AS n
            FROM query_audit_chunks c
            CROSS JOIN LATERAL ${principalPositions(filter)} AS p(i)
            CROSS JOIN unnest(${`{${statuses.join(',')}}`}::int[]) AS s(s)
            WHERE ${chunkWhere(within)} AND ${inside} AND ${sql.join(principal, sql` AND `)}`,
    ),
  )
  let total = Number(summed?.n ?? 0)
  let after: { first_at: number; id: string } | undefined
  for (;;) {
    const heads = await chunkRows<ChunkHead>(
      db,
      sql`SELECT ${CHUNK_HEAD} AS j FROM query_audit_chunks c
        WHERE ${chunkWhere(within)} AND NOT (${inside})
        ${after ? sql`AND (c.first_at, c.id) > (${after.first_at}::bigint, ${after.id}::uuid)` : sql``}
        ORDER BY c.first_at, c.id LIMIT ${COUNT_CHUNKS}`,
    )
    for (const head of heads) {
      for (let i = 0; i < head.entries; i++) if (entryMatches(head, i, within)) total++
    }
    const last = heads.at(-1)
    if (!last || heads.length < COUNT_CHUNKS) return total
    after = { first_at: last.first_at, id: last.id }
  }
}
