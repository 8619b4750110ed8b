import {
  and,
  asc,
  count,
  eq,
  gt,
  gte,
  isNotNull,
  isNull,
  min,
  or,
  type SQL,
  sql,
} from 'drizzle-orm'
import { type Db, rowsOf } from '../kernel/db.js'
import { adminAuditLog } from '../tables.js'
import {
  type AdminChainRow,
  canonicalAdminEntry,
  canonicalQueryEntry,
  chainHash,
} from './audit-chain.js'
import { CheckpointSignatureError, loadCheckpoints } from './audit-checkpoints.js'
import {
  type ChunkRow,
  decodeChunk,
  ENTRY_COLUMNS,
  entryAt,
  entryHash,
  sealChunk,
  type TextLookup,
  textDigest,
} from './audit-chunk-format.js'
import {
  CHUNK_HEAD,
  type ChunkHead,
  chunkRows,
  loadTexts,
  storedChunkRows,
} from './audit-chunk-reads.js'

export type AuditLogName = 'admin' | 'queries'

/** The first entry at which a chain does not hold. */
export interface ChainBreak {
  log: AuditLogName
  chain_id: string | null
  chain_seq: number | null
  /** The entry found there (for a missing stretch: the first entry after it). */
  entry_id: string
  reason: string
}

export interface LogVerification {
  log: AuditLogName
  /** Entries checked (linked into a chain). */
  entries: number
  chains: number
  /** Entries written before chaining began (store migration 0010), which no chain covers. */
  unchained: number
}

export interface AuditVerification {
  ok: boolean
  logs: LogVerification[]
  first_broken: ChainBreak | null
}

/** Where a chain resumes after retention removed its oldest entries (audit-checkpoints.ts). */
type Checkpoints = Map<string, { seq: number; hash: string }>

/**
 * Checks every hash chain of both audit logs (audit-chain.ts, audit-chunk-format.ts) and reports
 * the first entry where one breaks: content that no longer matches its hash or its batch's seal,
 * a changed or missing statement text, an entry that does not follow the one before it, a
 * stretch of missing entries, or an unlinked entry written after chaining began. A chain that
 * retention shortened starts where its checkpoint says. Reads in pages; `onProgress` hears the
 * running count of entries checked.
 */
export async function verifyAuditChains(
  db: Db,
  key: Buffer,
  onProgress?: (checked: number) => void,
): Promise<AuditVerification> {
  let firstBroken: ChainBreak | null = null
  const report = (found: ChainBreak) => {
    firstBroken ??= found
  }
  let checkpoints: Checkpoints = new Map()
  let checkpointBreak: ChainBreak | null = null
  try {
    checkpoints = await loadCheckpoints(db, key)
  } catch (error) {
    if (!(error instanceof CheckpointSignatureError)) throw error
    checkpointBreak = {
      log: 'queries',
      chain_id: null,
      chain_seq: null,
      entry_id: error.checkpointId,
      reason: 'retention checkpoint does not match its signature: it was changed or forged',
    }
  }
  const progress = { checked: 0, onProgress }
  const admin = await verifyAdminLog(db, key, checkpoints, report, progress)
  if (checkpointBreak) report(checkpointBreak)
  const queries = await verifyQueryLog(db, key, checkpoints, report, progress)
  return { ok: firstBroken === null, logs: [admin, queries], first_broken: firstBroken }
}

type Report = (found: ChainBreak) => void
type Progress = { checked: number; onProgress: ((checked: number) => void) | undefined }

type AdminRow = typeof adminAuditLog.$inferSelect

/** The admin audit: one row per entry, each with its own HMAC link (audit-chain.ts). */
async function verifyAdminLog(
  db: Db,
  key: Buffer,
  checkpoints: Checkpoints,
  report: Report,
  progress: Progress,
): Promise<LogVerification> {
  const table = adminAuditLog
  const result: LogVerification = { log: 'admin', entries: 0, chains: 0, unchained: 0 }
  const fail = (row: AdminRow, reason: string) =>
    report({
      log: 'admin',
      chain_id: row.chainId,
      chain_seq: row.chainSeq,
      entry_id: row.id,
      reason,
    })
  const [start] = await db
    .select({ at: min(table.createdAt) })
    .from(table)
    .where(isNotNull(table.chainId))
  const [legacy] = await db.select({ n: count() }).from(table).where(isNull(table.chainId))
  result.unchained = legacy?.n ?? 0
  if (start?.at) {
    // An entry without a link that is younger than the first link was not written by Palisade.
    const [late] = await db
      .select()
      .from(table)
      .where(and(isNull(table.chainId), gte(table.createdAt, start.at)))
      .orderBy(asc(table.createdAt))
      .limit(1)
    if (late) fail(late, 'entry has no chain link but was written after chaining began')
  }
  let chain: string | null = null
  let expected = 1
  let prev = ''
  let after: { chainId: string; seq: number } | undefined
  for (;;) {
    const page = await db
      .select()
      .from(table)
      .where(
        and(isNotNull(table.chainId), after ? keysetAfter(after.chainId, after.seq) : undefined),
      )
      .orderBy(asc(table.chainId), asc(table.chainSeq))
      .limit(2000)
    for (const row of page) {
      if (row.chainId !== chain) {
        chain = row.chainId
        result.chains++
        ;({ expected, prev } = chainStart(checkpoints, chain))
      }
      result.entries++
      const seq = row.chainSeq ?? 0
      if (seq > expected) {
        fail(row, `entries ${expected} to ${seq - 1} of this chain are missing`)
      } else if (seq < expected) {
        fail(row, `entry ${seq} appears more than once in this chain`)
      } else if (row.prevHash !== prev) {
        fail(row, 'entry does not follow the entry before it')
      } else if (
        chainHash(key, prev, canonicalAdminEntry(row as unknown as AdminChainRow)) !== row.hash
      ) {
        fail(row, 'entry content does not match its hash: it was changed after it was written')
      }
      expected = seq + 1
      prev = row.hash ?? ''
    }
    progress.checked += page.length
    progress.onProgress?.(progress.checked)
    const last = page.at(-1)
    if (!last || page.length < 2000) break
    after = { chainId: last.chainId as string, seq: last.chainSeq ?? 0 }
  }
  return result
}

/** Where a chain's verification starts: entry 1 after an empty hash, or after its checkpoint. */
function chainStart(
  checkpoints: Checkpoints,
  chain: string | null,
): { expected: number; prev: string } {
  const resume = chain === null ? undefined : checkpoints.get(chain)
  return resume ? { expected: resume.seq + 1, prev: resume.hash } : { expected: 1, prev: '' }
}

function keysetAfter(chainId: string, seq: number): SQL | undefined {
  const t = adminAuditLog
  return or(gt(t.chainId, chainId), and(eq(t.chainId, chainId), gt(t.chainSeq, seq)))
}

/** Batches read per round trip (each holds at most 4096 entries, usually 500 or fewer). */
const VERIFY_CHUNKS = 16

/**
 * The query audit, stored in batches (audit-chunk-format.ts). Per chain, in sequence order:
 * each batch must start where the chain's previous batch ended, name the content hash of the
 * chain's previous entry, and match its seal (format 2); every text it refers to must match its
 * digest. Batches moved from the row-per-entry log (format 1) carry one HMAC link per entry,
 * checked as before.
 */
async function verifyQueryLog(
  db: Db,
  key: Buffer,
  checkpoints: Checkpoints,
  report: Report,
  progress: Progress,
): Promise<LogVerification> {
  const result: LogVerification = { log: 'queries', entries: 0, chains: 0, unchained: 0 }
  const [head] = await rowsOf<{ unchained: string | null; start: string | null }>(
    db.execute(sql`SELECT
        (SELECT sum(entries) FROM query_audit_chunks WHERE chain_id IS NULL)::text AS unchained,
        (SELECT min(first_at) FROM query_audit_chunks WHERE chain_id IS NOT NULL)::text AS start`),
  )
  result.unchained = Number(head?.unchained ?? 0)
  if (head?.start !== null && head?.start !== undefined) {
    // An entry without a link that is younger than the first link was not written by Palisade.
    const late = await firstUnlinkedSince(db, Number(head.start))
    if (late) {
      report({
        log: 'queries',
        chain_id: null,
        chain_seq: null,
        entry_id: late.id,
        reason: 'entry has no chain link but was written after chaining began',
      })
    }
  }
  let chain: string | null = null
  let expected = 1
  let prev = ''
  let after: ChunkRow | undefined
  for (;;) {
    const page = await storedChunkRows<ChunkRow>(
      db,
      sql`SELECT row_to_json(c)::text AS j FROM (
          SELECT c.id, c.chain_id, c.first_seq FROM query_audit_chunks c WHERE c.chain_id IS NOT NULL
          ${after ? sql`AND (c.chain_id, c.first_seq, c.id) > (${after.chain_id}, ${after.first_seq}::bigint, ${after.id}::uuid)` : sql``}
          ORDER BY c.chain_id, c.first_seq, c.id LIMIT ${VERIFY_CHUNKS}
        ) k JOIN query_audit_chunks c ON c.id = k.id ORDER BY k.chain_id, k.first_seq, k.id`,
    )
    const texts = await loadTexts(
      db,
      page.flatMap((r) => r.texts),
    )
    const lookup: TextLookup = (d) => texts.get(d)
    const badTexts = new Map<string, string>()
    for (const digest of new Set(page.flatMap((r) => r.texts))) {
      if (!digest) continue
      const body = texts.get(digest)
      if (body === undefined) {
        badTexts.set(digest, 'statement text is missing: it was deleted after it was written')
      } else if (textDigest(body) !== digest) {
        badTexts.set(digest, 'statement text was changed after it was written')
      }
    }
    for (const stored of page) {
      const { row, unreadable } = decoded(stored)
      if (row.chain_id !== chain) {
        chain = row.chain_id
        result.chains++
        ;({ expected, prev } = chainStart(checkpoints, chain))
      }
      result.entries += row.entries
      const first = row.first_seq ?? 0
      const fail = (i: number, reason: string) =>
        report({
          log: 'queries',
          chain_id: row.chain_id,
          chain_seq: first + i,
          entry_id: row.e_id?.[i] ?? row.id,
          reason,
        })
      const last = first + row.entries - 1
      if (first > expected) {
        fail(0, `entries ${expected} to ${first - 1} of this chain are missing`)
      } else if (first < expected) {
        fail(0, `entry ${first} appears more than once in this chain`)
      }
      const malformed = unreadable ?? malformedChunk(row)
      if (malformed) {
        fail(0, `batch of entries ${first} to ${last} of this chain is malformed: ${malformed}`)
        expected = Math.max(expected, last + 1)
        prev = ''
        continue
      }
      if (row.format !== 1) {
        if (first === expected && row.prev_hash !== prev) {
          fail(0, 'entry does not follow the entry before it')
        }
        if (sealChunk(key, row) !== row.hash) {
          fail(
            0,
            `an entry of this batch (entries ${first} to ${last} of this chain) was changed after it was written`,
          )
        }
        checkTexts(row, badTexts, fail)
        prev = row.entries > 0 ? entryHash(entryAt(row, row.entries - 1, lookup)) : prev
      } else {
        checkTexts(row, badTexts, fail)
        const links = row.e_hash ?? []
        for (let i = 0; i < row.entries; i++) {
          const canonical = canonicalQueryEntry(entryAt(row, i, lookup))
          if (chainHash(key, prev, canonical) !== links[i]) {
            fail(i, 'entry content does not match its hash: it was changed after it was written')
          }
          prev = links[i] ?? ''
        }
      }
      expected = last + 1
    }
    progress.checked += page.reduce((n, r) => n + r.entries, 0)
    progress.onProgress?.(progress.checked)
    after = page.at(-1)
    if (page.length < VERIFY_CHUNKS) break
  }
  return result
}

/** A stored batch with its entries decoded, or why they cannot be. */
function decoded(stored: ChunkRow): { row: ChunkRow; unreadable: string | null } {
  try {
    return { row: decodeChunk(stored), unreadable: null }
  } catch (error) {
    return { row: stored, unreadable: `its packed entries cannot be read (${String(error)})` }
  }
}

/**
 * The first entry (by time, then id) at or after `start` in a batch without a chain, or null.
 * Batches are read oldest first and the walk stops once no later batch can hold an earlier one.
 */
async function firstUnlinkedSince(db: Db, start: number): Promise<{ id: string } | null> {
  let best: { at: number; id: string } | null = null
  let after: { first_at: number; id: string } | undefined
  for (;;) {
    const heads = await chunkRows<ChunkHead>(
      db,
      sql`SELECT ${CHUNK_HEAD} AS j FROM query_audit_chunks c
        WHERE c.chain_id IS NULL AND c.last_at >= ${start}::bigint
        ${after ? sql`AND (c.first_at, c.id) > (${after.first_at}::bigint, ${after.id}::uuid)` : sql``}
        ORDER BY c.first_at, c.id LIMIT ${VERIFY_CHUNKS}`,
    )
    for (const head of heads) {
      if (best && head.first_at > best.at) return best
      for (let i = 0; i < head.entries; i++) {
        const at = head.e_at[i] as number
        const id = head.e_id[i] as string
        if (at >= start && (!best || at < best.at || (at === best.at && id < best.id))) {
          best = { at, id }
        }
      }
    }
    const last = heads.at(-1)
    if (!last || heads.length < VERIFY_CHUNKS) return best
    after = { first_at: last.first_at, id: last.id }
  }
}

/** Why a batch cannot be read as entries, or null: arrays that do not match its entry count. */
function malformedChunk(row: ChunkRow): string | null {
  if (row.format < 1 || row.format > 3) return `unknown format ${row.format}`
  if (!Number.isSafeInteger(row.first_seq) || !Number.isInteger(row.entries) || row.entries < 1) {
    return 'no entries'
  }
  for (const column of ENTRY_COLUMNS) {
    if (!Array.isArray(row[column]) || row[column].length !== row.entries) {
      return `${column} does not hold one element per entry`
    }
  }
  if (row.format === 1 && (row.e_hash?.length ?? -1) !== row.entries) {
    return 'e_hash does not hold one element per entry'
  }
  for (let i = 0; i < row.entries; i++) {
    const p = row.e_principal[i] as number
    if (!Number.isSafeInteger(row.e_at[i]) || !(p >= 1 && p <= row.p_user_id.length)) {
      return `entry ${(row.first_seq as number) + i} has no valid time or principal`
    }
  }
  return null
}

/**
 * Every text a batch refers to must be stored and match its digest (the digest is sealed with
 * the batch, the body is not). Reports the first entry that refers to a text that does not.
 */
function checkTexts(
  row: ChunkRow,
  badTexts: Map<string, string>,
  fail: (i: number, reason: string) => void,
): void {
  if (badTexts.size === 0) return
  const bad = new Map<number, string>()
  for (const [s, digest] of row.texts.entries()) {
    const reason = digest ? badTexts.get(digest) : undefined
    if (reason) bad.set(s + 1, reason)
  }
  if (bad.size === 0) return
  for (let i = 0; i < row.entries; i++) {
    for (const column of TEXT_COLUMNS) {
      const reason = bad.get(row[column][i] ?? 0)
      if (reason) {
        fail(i, reason)
        return
      }
    }
  }
  fail(0, [...bad.values()][0] as string)
}

/** The per-entry columns that refer to texts. */
const TEXT_COLUMNS = ['e_original', 'e_rewritten', 'e_policies', 'e_error', 'e_shadow'] as const
