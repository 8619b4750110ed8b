import { createHash, createHmac } from 'node:crypto'
import { fillTemplate, textTemplate } from '@palisade/core'
import { canonicalQueryEntry } from './audit-chain.js'

/**
 * How query-audit entries are stored (docs/audit.md#how-rows-are-stored): one row of
 * `query_audit_chunks` per batch, one array element per entry, texts once in
 * `query_audit_texts`. This module is the format's single definition: the writer builds rows with
 * it, reads and exports turn rows back into entries with it, and verify checks seals with it.
 */

/** Entry status as stored (`e_status`), and the bit each sets in `status_mask`. */
export const STATUS_CODES = { success: 0, error: 1, denied: 2 } as const
export const STATUS_NAMES = ['success', 'error', 'denied'] as const
export type AuditStatus = (typeof STATUS_NAMES)[number]

/** Entries per batch at most: an entry's id carries its index in 12 bits. */
export const MAX_CHUNK_ENTRIES = 4096

/** A batch row as stored, keyed by column name (what `row_to_json` gives back). */
export interface ChunkRow {
  id: string
  format: number
  chain_id: string | null
  first_seq: number | null
  prev_hash: string | null
  hash: string | null
  first_at: number
  last_at: number
  entries: number
  status_mask: number
  p_user_id: string[]
  p_username: string[]
  p_ds_id: string[]
  p_ds_name: string[]
  p_client_info: (string | null)[]
  texts: (string | null)[]
  e_id: string[]
  e_at: number[]
  e_principal: number[]
  e_original: number[]
  e_params: (string | null)[]
  e_rewritten: (number | null)[]
  e_policies: number[]
  e_elapsed: (number | null)[]
  e_status: number[]
  e_error: (number | null)[]
  e_shadow: (number | null)[]
  e_shadow_denied: (boolean | null)[]
  e_hash: (string | null)[] | null
}

/** The stored columns of a batch row, in table order, with the type each is written as. */
export const CHUNK_COLUMNS: readonly (readonly [keyof ChunkRow, string])[] = [
  ['id', 'uuid'],
  ['format', 'int2'],
  ['chain_id', 'text'],
  ['first_seq', 'int8'],
  ['prev_hash', 'text'],
  ['hash', 'text'],
  ['first_at', 'int8'],
  ['last_at', 'int8'],
  ['entries', 'int4'],
  ['status_mask', 'int2'],
  ['p_user_id', 'uuid[]'],
  ['p_username', 'text[]'],
  ['p_ds_id', 'uuid[]'],
  ['p_ds_name', 'text[]'],
  ['p_client_info', 'text[]'],
  ['texts', 'uuid[]'],
  ['e_id', 'uuid[]'],
  ['e_at', 'int8[]'],
  ['e_principal', 'int2[]'],
  ['e_original', 'int2[]'],
  ['e_params', 'text[]'],
  ['e_rewritten', 'int2[]'],
  ['e_policies', 'int2[]'],
  ['e_elapsed', 'int4[]'],
  ['e_status', 'int2[]'],
  ['e_error', 'int2[]'],
  ['e_shadow', 'int2[]'],
  ['e_shadow_denied', 'bool[]'],
  ['e_hash', 'text[]'],
]

/**
 * The columns a format-2 seal covers, in this order: every column but the seal itself and the
 * format-1 links. Changing this order breaks every seal already stored.
 */
export const SEALED_COLUMNS: readonly (keyof ChunkRow)[] = CHUNK_COLUMNS.map(
  ([column]) => column,
).filter((column) => column !== 'hash' && column !== 'e_hash')

/** The per-entry array columns of a batch, which must each hold one element per entry. */
export const ENTRY_COLUMNS = SEALED_COLUMNS.filter((column) => column.startsWith('e_'))

/** The sealed columns of a batch, each as JSON, in SEALED_COLUMNS order. */
export function chunkParts(row: ChunkRow): string[] {
  return SEALED_COLUMNS.map((column) => JSON.stringify(row[column]))
}

/** The canonical content of a batch: its sealed columns as one JSON array, in a fixed order. */
export function chunkCanonical(row: ChunkRow): string {
  return `[${chunkParts(row).join(',')}]`
}

/** The seal of a batch from its parts (chunkParts). */
export function sealParts(key: Buffer, parts: readonly string[]): string {
  return createHmac('sha256', key)
    .update(`[${parts.join(',')}]`)
    .digest('hex')
}

/** The seal of a batch: HMAC-SHA256, keyed from the store's secret, of its canonical content. */
export function sealChunk(key: Buffer, row: ChunkRow): string {
  return sealParts(key, chunkParts(row))
}

/** The digest a text is stored under: the first 16 bytes of its SHA-256, as a UUID. */
export function textDigest(body: string): string {
  const hex = createHash('sha256').update(body, 'utf8').digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** One entry of a batch, with its texts resolved. */
export interface StoredEntry {
  id: string
  userId: string
  username: string
  dataSourceId: string
  datasourceName: string
  originalQuery: string
  rewrittenQuery: string | null
  policiesApplied: string
  executionTimeMs: number | null
  clientInfo: string | null
  status: AuditStatus
  errorMessage: string | null
  shadowPolicies: string | null
  shadowDenied: boolean | null
  createdAt: Date
  chainId: string | null
  chainSeq: number | null
}

/** Resolves text digests to bodies; a digest without a body reads as an empty string. */
export type TextLookup = (digest: string) => string | undefined

/** A templated text with its literals put back (literal-template.ts in core). */
function filled(text: string, literals: readonly string[] | undefined): string {
  if (!literals) return text
  const template = textTemplate(text, literals.length)
  return template ? fillTemplate(template, literals) : text
}

/** The entry at 0-based `i` of `row`. */
export function entryAt(row: ChunkRow, i: number, lookup: TextLookup): StoredEntry {
  const text = (slot: number | null | undefined): string | null => {
    if (slot === null || slot === undefined) return null
    const digest = row.texts[slot - 1]
    return digest ? (lookup(digest) ?? '') : null
  }
  const params = row.e_params[i]
  const literals = params ? (JSON.parse(params) as string[]) : undefined
  const p = (row.e_principal[i] as number) - 1
  const rewritten = text(row.e_rewritten[i])
  return {
    id: row.e_id[i] as string,
    userId: row.p_user_id[p] as string,
    username: row.p_username[p] as string,
    dataSourceId: row.p_ds_id[p] as string,
    datasourceName: row.p_ds_name[p] as string,
    originalQuery: filled(text(row.e_original[i]) ?? '', literals),
    rewrittenQuery: rewritten === null ? null : filled(rewritten, literals),
    policiesApplied: text(row.e_policies[i]) ?? '[]',
    executionTimeMs: row.e_elapsed[i] ?? null,
    clientInfo: row.p_client_info[p] ?? null,
    status: STATUS_NAMES[row.e_status[i] as number] ?? 'error',
    errorMessage: text(row.e_error[i]),
    shadowPolicies: text(row.e_shadow[i]),
    shadowDenied: row.e_shadow_denied[i] ?? null,
    createdAt: new Date(row.e_at[i] as number),
    chainId: row.chain_id,
    chainSeq: row.first_seq === null ? null : row.first_seq + i,
  }
}

/**
 * The content hash of an entry (format 2): SHA-256 of every field the admin API shows
 * (canonicalQueryEntry). Exports link each entry to the one before by it; a batch's
 * `prev_hash` is that of the entry before its first, so the seals chain the batches.
 */
export function entryHash(entry: StoredEntry): string {
  return createHash('sha256').update(canonicalQueryEntry(entry)).digest('hex')
}
