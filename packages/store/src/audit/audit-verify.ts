import { and, asc, count, eq, gt, gte, isNotNull, isNull, min, or, type SQL } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { adminAuditLog, queryAuditLog } from '../tables.js'
import {
  type AdminChainRow,
  canonicalAdminEntry,
  canonicalQueryEntry,
  chainHash,
  type QueryChainRow,
} from './audit-chain.js'

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

type Table = typeof adminAuditLog | typeof queryAuditLog
type Row = (typeof adminAuditLog.$inferSelect | typeof queryAuditLog.$inferSelect) & {
  chainId: string | null
  chainSeq: number | null
  prevHash: string | null
  hash: string | null
}

const LOGS: { log: AuditLogName; table: Table; canonical: (row: Row) => string }[] = [
  {
    log: 'admin',
    table: adminAuditLog,
    canonical: (row) => canonicalAdminEntry(row as unknown as AdminChainRow),
  },
  {
    log: 'queries',
    table: queryAuditLog,
    canonical: (row) => canonicalQueryEntry(row as unknown as QueryChainRow),
  },
]

/**
 * Checks every hash chain of both audit logs (audit-chain.ts) and reports the first entry where
 * one breaks: content that no longer matches its hash, an entry that does not follow the one
 * before it, a stretch of missing entries, or an unlinked entry written after chaining began.
 * Reads in pages; `onProgress` hears the running count of entries checked.
 */
export async function verifyAuditChains(
  db: Db,
  key: Buffer,
  onProgress?: (checked: number) => void,
): Promise<AuditVerification> {
  const logs: LogVerification[] = []
  let firstBroken: ChainBreak | null = null
  let checked = 0
  for (const { log, table, canonical } of LOGS) {
    const result: LogVerification = { log, entries: 0, chains: 0, unchained: 0 }
    logs.push(result)
    const fail = (row: Row, reason: string) => {
      firstBroken ??= {
        log,
        chain_id: row.chainId,
        chain_seq: row.chainSeq,
        entry_id: row.id,
        reason,
      }
    }
    const [start] = await db
      .select({ at: min(table.createdAt) })
      .from(table)
      .where(isNotNull(table.chainId))
    const [legacy] = await db.select({ n: count() }).from(table).where(isNull(table.chainId))
    result.unchained = legacy?.n ?? 0
    if (start?.at) {
      // An entry without a link that is younger than the first link was not written by Palisade.
      const [late] = (await db
        .select()
        .from(table)
        .where(and(isNull(table.chainId), gte(table.createdAt, start.at)))
        .orderBy(asc(table.createdAt))
        .limit(1)) as Row[]
      if (late) fail(late, 'entry has no chain link but was written after chaining began')
    }
    let chain: string | null = null
    let expected = 1
    let prev = ''
    let after: { chainId: string; seq: number } | undefined
    for (;;) {
      const page = (await db
        .select()
        .from(table)
        .where(
          and(
            isNotNull(table.chainId),
            after ? keysetAfter(table, after.chainId, after.seq) : undefined,
          ),
        )
        .orderBy(asc(table.chainId), asc(table.chainSeq))
        .limit(2000)) as Row[]
      for (const row of page) {
        if (row.chainId !== chain) {
          chain = row.chainId
          result.chains++
          expected = 1
          prev = ''
        }
        result.entries++
        const seq = row.chainSeq ?? 0
        if (seq > expected) {
          fail(row, `entries ${expected} to ${seq - 1} of this chain are missing`)
        } else if (seq < expected) {
          fail(row, `entry ${seq} appears more than once in this chain`)
        } else if (row.prevHash !== prev) {
          fail(row, 'entry does not follow the entry before it')
        } else if (chainHash(key, prev, canonical(row)) !== row.hash) {
          fail(row, 'entry content does not match its hash: it was changed after it was written')
        }
        expected = seq + 1
        prev = row.hash ?? ''
      }
      checked += page.length
      onProgress?.(checked)
      const last = page.at(-1)
      if (!last || page.length < 2000) break
      after = { chainId: last.chainId as string, seq: last.chainSeq ?? 0 }
    }
  }
  return { ok: firstBroken === null, logs, first_broken: firstBroken }
}

function keysetAfter(table: Table, chainId: string, seq: number): SQL | undefined {
  return or(gt(table.chainId, chainId), and(eq(table.chainId, chainId), gt(table.chainSeq, seq)))
}
