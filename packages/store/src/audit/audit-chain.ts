import { createHmac, randomUUID } from 'node:crypto'

/**
 * Tamper evidence for both audit logs. Each writing stream (one per log per process: several
 * instances on one store never interleave their links) numbers its entries from 1 and stores
 * with each the previous entry's hash and its own: HMAC-SHA256, keyed from the store's secret
 * key, of the previous hash and the entry's canonical content. Changing, inserting or removing
 * an entry inside a stream breaks the chain at that point, and without the key nobody can
 * forge a replacement chain. Removing a whole stream, or the newest entries of one, is not
 * detectable from the chain alone (docs/operations.md, "Audit integrity").
 */

/** The chain columns of one entry. */
export interface ChainLink {
  chainId: string
  chainSeq: number
  prevHash: string
  hash: string
}

/** The purpose the chain key is derived for (SecretBox.derive). */
export const CHAIN_KEY_PURPOSE = 'palisade audit chain v1'

/** The hash of an entry: HMAC of the previous hash and the entry's canonical content. */
export function chainHash(key: Buffer, prevHash: string, canonical: string): string {
  return createHmac('sha256', key).update(prevHash).update('\n').update(canonical).digest('hex')
}

/** The fields of an admin-audit entry that its hash covers. */
export interface AdminChainRow {
  id: string
  resourceType: string
  resourceId: string
  action: string
  actorId: string
  changes?: string | null
  createdAt: Date
}

/** The fields of a query-audit entry that its hash covers. */
export interface QueryChainRow {
  id: string
  userId: string
  username: string
  dataSourceId: string
  datasourceName: string
  originalQuery: string
  rewrittenQuery?: string | null
  policiesApplied?: string
  executionTimeMs?: number | null
  clientInfo?: string | null
  status: string
  errorMessage?: string | null
  createdAt: Date
}

/** Every stored field of an admin-audit entry, in a fixed order. */
export function canonicalAdminEntry(row: AdminChainRow): string {
  return JSON.stringify([
    row.id,
    row.resourceType,
    row.resourceId,
    row.action,
    row.actorId,
    row.changes ?? null,
    row.createdAt.toISOString(),
  ])
}

/** Every stored field of a query-audit entry, in a fixed order. */
export function canonicalQueryEntry(row: QueryChainRow): string {
  return JSON.stringify([
    row.id,
    row.userId,
    row.username,
    row.dataSourceId,
    row.datasourceName,
    row.originalQuery,
    row.rewrittenQuery ?? null,
    row.policiesApplied ?? '[]',
    row.executionTimeMs ?? null,
    row.clientInfo ?? null,
    row.status,
    row.errorMessage ?? null,
    row.createdAt.toISOString(),
  ])
}

/**
 * One writing stream's head. `link` computes the links of the next entries without moving the
 * head; `commit` moves it once they are stored, so a failed write leaves no gap.
 */
export class AuditChain {
  readonly id = randomUUID()
  readonly #key: Buffer
  #seq = 0
  #head = ''
  /** Serializes writers from `link` until their entries are committed (or not). */
  #tail: Promise<void> = Promise.resolve()

  constructor(key: Buffer) {
    this.#key = key
  }

  /** Waits for the writers before; call the returned function once this one's write settled. */
  async acquire(): Promise<() => void> {
    let release: () => void = () => {}
    const mine = new Promise<void>((resolve) => {
      release = resolve
    })
    const before = this.#tail
    this.#tail = before.then(() => mine)
    await before
    return release
  }

  link(canonicals: readonly string[]): { links: ChainLink[]; commit: () => void } {
    let seq = this.#seq
    let head = this.#head
    const links = canonicals.map((canonical) => {
      const prevHash = head
      head = chainHash(this.#key, prevHash, canonical)
      return { chainId: this.id, chainSeq: ++seq, prevHash, hash: head }
    })
    return {
      links,
      commit: () => {
        this.#seq = seq
        this.#head = head
      },
    }
  }
}

/** The chain columns of an exported entry. */
export interface ExportedLink {
  chain_id: string | null
  chain_seq: number | null
  prev_hash: string | null
  hash: string | null
}

export const linkOf = (r: {
  chainId: string | null
  chainSeq: number | null
  prevHash: string | null
  hash: string | null
}): ExportedLink => ({
  chain_id: r.chainId,
  chain_seq: r.chainSeq,
  prev_hash: r.prevHash,
  hash: r.hash,
})
