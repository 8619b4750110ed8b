import { createHash, createHmac } from 'node:crypto'
import { fillTemplate, textTemplate } from '@palisade/core'
import { canonicalQueryEntry } from './audit-chain.js'
import { byteaBytes, type EntryColumns, unpackEntries, unpackLiterals } from './audit-entry-pack.js'

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

/**
 * A batch row as stored, keyed by column name (what `row_to_json` gives back), with its entry
 * arrays filled: formats 1 and 2 store them, format 3 packs them (`e_data`, `e_literals`:
 * audit-entry-pack.ts) and chunkRows fills them when it reads the row.
 */
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
  /** Format 3: entries per principal and status, `[(p - 1) * 3 + status]`. */
  p_counts: number[] | null
  /** Format 3: the packed entries, as bytea hex text. */
  e_data: string | null
  /** Format 3: the packed literals, as bytea hex text (null: none). */
  e_literals: string | null
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

/** The columns every format stores, in table order: which batch, chain and principals. */
const HEAD_COLUMNS = [
  'id',
  'format',
  'chain_id',
  'first_seq',
  'prev_hash',
  'first_at',
  'last_at',
  'entries',
  'status_mask',
  'p_user_id',
  'p_username',
  'p_ds_id',
  'p_ds_name',
  'p_client_info',
  'texts',
] as const satisfies readonly (keyof ChunkRow)[]

/** The per-entry array columns of formats 1 and 2, which must each hold one element per entry. */
export const ENTRY_COLUMNS = [
  'e_id',
  'e_at',
  'e_principal',
  'e_original',
  'e_params',
  'e_rewritten',
  'e_policies',
  'e_elapsed',
  'e_status',
  'e_error',
  'e_shadow',
  'e_shadow_denied',
] as const satisfies readonly (keyof ChunkRow)[]

/** The columns a batch is written with (format 3), and the type each is sent as. */
export const WRITTEN_COLUMNS: readonly (readonly [keyof ChunkRow, string])[] = [
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
  ['p_counts', 'int4[]'],
  ['e_data', 'bytea'],
  ['e_literals', 'bytea'],
]

/**
 * The columns a seal covers, per format, in this order: every stored column but the seal
 * itself. Changing an order breaks every seal of that format already stored.
 */
const SEALED_COLUMNS: Readonly<Record<number, readonly (keyof ChunkRow)[]>> = {
  2: [...HEAD_COLUMNS, ...ENTRY_COLUMNS],
  3: [...HEAD_COLUMNS, 'p_counts', 'e_data', 'e_literals'],
}

/** The canonical content of a batch: its sealed columns as one JSON array, in a fixed order. */
export function chunkCanonical(row: ChunkRow): string {
  const columns = SEALED_COLUMNS[row.format]
  if (!columns) throw new Error(`batch format ${row.format} has no seal`)
  return `[${columns.map((column) => JSON.stringify(row[column])).join(',')}]`
}

/** The seal of a batch: HMAC-SHA256, keyed from the store's secret, of its canonical content. */
export function sealChunk(key: Buffer, row: ChunkRow): string {
  return createHmac('sha256', key).update(chunkCanonical(row)).digest('hex')
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

/** Hex of a UUID's 16 bytes. */
function uuidHex(uuid: string): string {
  return uuid.replaceAll('-', '')
}

/**
 * The ids of entries `from`… of a batch (format 2 stores them, format 3 derives them): a UUIDv7
 * with the entry's millisecond, its index in the 12 bits after the version, and the batch id's
 * random tail, so ids sort by time and are the same on every attempt to store the batch.
 */
export function entryIds(seed: string, at: readonly number[], from = 0): string[] {
  const hex = uuidHex(seed).slice(16)
  // The variant bits (10xx) over the seed's random tail.
  const tail = `${((Number.parseInt(hex.slice(0, 2), 16) & 0x3f) | 0x80).toString(16)}${hex.slice(2)}`
  const suffix = `-${tail.slice(0, 4)}-${tail.slice(4)}`
  let lastMs = Number.NaN
  let prefix = ''
  const ids = new Array<string>(at.length)
  for (let i = from; i < at.length; i++) {
    const ms = at[i] as number
    if (ms !== lastMs) {
      lastMs = ms
      const time = Math.max(0, ms).toString(16).padStart(12, '0').slice(-12)
      prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-`
    }
    ids[i] = `${prefix}${(0x7000 | (i & 0xfff)).toString(16)}${suffix}`
  }
  return ids
}

/** A 0-based text index as a 1-based slot of `texts`, null for none. */
const slotOf = (index: number): number | null => (index < 0 ? null : index + 1)

/**
 * Fills the entry arrays of a format-3 `row` from its packed columns and literals, for entries
 * `from` on (those before stay holes: the writer needs only its last entry).
 */
export function fillEntries(
  row: ChunkRow,
  c: EntryColumns,
  literals: readonly string[] | null,
  from = 0,
): ChunkRow {
  const n = c.n
  const arrays = {
    e_at: new Array<number>(n),
    e_principal: new Array<number>(n),
    e_original: new Array<number>(n),
    e_params: new Array<string | null>(n),
    e_rewritten: new Array<number | null>(n),
    e_policies: new Array<number>(n),
    e_elapsed: new Array<number | null>(n),
    e_status: new Array<number>(n),
    e_error: new Array<number | null>(n),
    e_shadow: new Array<number | null>(n),
    e_shadow_denied: new Array<boolean | null>(n),
  }
  let literalAt = 0
  for (let i = 0; i < n; i++) {
    const count = c.literalCount[i] as number
    if (i >= from) {
      arrays.e_at[i] = c.at[i] as number
      arrays.e_principal[i] = (c.principal[i] as number) + 1
      arrays.e_original[i] = slotOf(c.original[i] as number) ?? 0
      arrays.e_params[i] =
        count < 0 || !literals ? null : JSON.stringify(literals.slice(literalAt, literalAt + count))
      arrays.e_rewritten[i] = slotOf(c.rewritten[i] as number)
      arrays.e_policies[i] = slotOf(c.policies[i] as number) ?? 0
      const elapsed = c.elapsed[i] as number
      arrays.e_elapsed[i] = elapsed < 0 ? null : elapsed
      arrays.e_status[i] = c.status[i] as number
      arrays.e_error[i] = slotOf(c.error[i] as number)
      arrays.e_shadow[i] = slotOf(c.shadow[i] as number)
      const denied = c.shadowDenied[i] as number
      arrays.e_shadow_denied[i] = denied < 0 ? null : denied === 1
    }
    if (count > 0) literalAt += count
  }
  return { ...row, ...arrays, e_id: entryIds(row.id, arrays.e_at, from) }
}

/**
 * A batch row as read (`row_to_json`, or CHUNK_HEAD without `e_literals`), with the entry arrays
 * of format 3 filled (`e_params` only when the literals were read).
 */
export function decodeChunk(row: ChunkRow): ChunkRow {
  if (row.format !== 3) return row
  const packed = byteaBytes(row.e_data)
  if (packed === null) throw new Error('a format 3 batch has no entries')
  const literals = row.e_literals === undefined ? null : unpackLiterals(byteaBytes(row.e_literals))
  return fillEntries(row, unpackEntries(packed, row.entries), literals)
}
