import { createHmac, timingSafeEqual } from 'node:crypto'
import { asc } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { queryAuditCheckpoints } from '../tables.js'

/**
 * Retention checkpoints of the query audit (docs/audit.md#retention). Retention removes the
 * oldest batches of the query audit; before it does, it records where each affected chain now
 * resumes: the sequence number and content hash of the last entry it removed (for batches moved
 * from the row-per-entry log, format 1, that entry's HMAC link). Verify starts such a chain there
 * instead of at entry 1 with an empty hash, so the chain stays checkable across the removed
 * stretch. Each checkpoint is signed with the chain key: without it, nobody can move a chain's
 * start to hide entries removed behind Palisade.
 */

/** Where one chain resumes after a retention run. */
export interface ChainPosition {
  chain_id: string
  /** The last removed entry's sequence number. */
  seq: number
  /** The last removed entry's content hash (format 1: its HMAC link). */
  hash: string
}

/** A checkpoint row as stored (`query_audit_checkpoints`). */
export type CheckpointRow = typeof queryAuditCheckpoints.$inferSelect

/** A checkpoint signature does not match its content: it was changed or forged. */
export class CheckpointSignatureError extends Error {
  readonly checkpointId: string

  constructor(checkpointId: string) {
    super(`query-audit retention checkpoint ${checkpointId} does not match its signature`)
    this.name = 'CheckpointSignatureError'
    this.checkpointId = checkpointId
  }
}

/** The canonical content of a checkpoint: every column but the signature, in a fixed order. */
export function checkpointCanonical(row: Omit<CheckpointRow, 'signature'>): string {
  return JSON.stringify([
    'palisade query audit checkpoint v1',
    row.id,
    row.createdAt,
    row.cutoff,
    row.positions,
    row.removedChunks,
    row.removedEntries,
  ])
}

/** The signature of a checkpoint: HMAC-SHA256, with the chain key, of its canonical content. */
export function signCheckpoint(key: Buffer, row: Omit<CheckpointRow, 'signature'>): string {
  return createHmac('sha256', key).update(checkpointCanonical(row)).digest('hex')
}

function signatureHolds(key: Buffer, row: CheckpointRow): boolean {
  const expected = Buffer.from(signCheckpoint(key, row), 'hex')
  const stored = Buffer.from(row.signature, 'hex')
  return stored.length === expected.length && timingSafeEqual(stored, expected)
}

/** The positions of a checkpoint, or null when they are not what retention writes. */
function positionsOf(row: CheckpointRow): ChainPosition[] | null {
  try {
    const parsed: unknown = JSON.parse(row.positions)
    if (!Array.isArray(parsed)) return null
    for (const p of parsed as Partial<ChainPosition>[]) {
      if (
        typeof p?.chain_id !== 'string' ||
        !Number.isSafeInteger(p.seq) ||
        typeof p.hash !== 'string'
      ) {
        return null
      }
    }
    return parsed as ChainPosition[]
  } catch {
    return null
  }
}

/** Every checkpoint, oldest first. */
async function allCheckpoints(db: Db): Promise<CheckpointRow[]> {
  return db
    .select()
    .from(queryAuditCheckpoints)
    .orderBy(asc(queryAuditCheckpoints.createdAt), asc(queryAuditCheckpoints.id))
}

/** The id of the first checkpoint (oldest first) whose signature does not hold, or null. */
export async function verifyCheckpointSignatures(db: Db, key: Buffer): Promise<string | null> {
  for (const row of await allCheckpoints(db)) {
    if (!signatureHolds(key, row) || positionsOf(row) === null) return row.id
  }
  return null
}

/**
 * Where each chain resumes after every retention run so far: per chain, the furthest position
 * any checkpoint recorded. Throws CheckpointSignatureError at the first checkpoint whose
 * signature does not hold (use verifyCheckpointSignatures to report it instead).
 */
export async function loadCheckpoints(
  db: Db,
  key: Buffer,
): Promise<Map<string, { seq: number; hash: string }>> {
  const positions = new Map<string, { seq: number; hash: string }>()
  for (const row of await allCheckpoints(db)) {
    const list = signatureHolds(key, row) ? positionsOf(row) : null
    if (list === null) throw new CheckpointSignatureError(row.id)
    for (const p of list) {
      const known = positions.get(p.chain_id)
      if (!known || p.seq > known.seq) positions.set(p.chain_id, { seq: p.seq, hash: p.hash })
    }
  }
  return positions
}
