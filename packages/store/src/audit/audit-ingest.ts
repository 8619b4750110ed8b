import { constraintOf, sqlStateOf } from '../kernel/db.js'
import type { AuditBatch } from './audit-batch.js'
import {
  type ChunkRow,
  entryAt,
  entryHash,
  fillEntries,
  STATUS_NAMES,
  sealChunk,
  textDigest,
  WRITTEN_COLUMNS,
} from './audit-chunk-format.js'
import { byteaText, packEntries, packLiterals } from './audit-entry-pack.js'

/**
 * Stores query-audit batches (audit-batch.ts) as sealed rows (audit-chunk-format.ts). It runs
 * where the store's work runs: on the embedded store's own thread, on the PostgreSQL store's
 * audit thread, or in-process for a store handed in by a test. It keeps its writing stream's
 * head (sequence and last entry hash) and moves it only once a batch is committed, so a retry
 * of the same batch makes the same row, and one the store already holds is counted stored.
 */

/**
 * The one statement that stores a batch: its new texts and hourly counts (`$1`, JSON: a few
 * rows) and its row (`$2`…, one parameter per column, arrays in PostgreSQL's array syntax: the
 * embedded store reads those about twice as fast as the same arrays in JSON). All or nothing, one
 * round trip, no transaction held open; a retry of a batch that was stored fails on the row's
 * key as a whole.
 */
export const INSERT_BATCH = `WITH b AS (SELECT $1::json AS j),
  t AS (INSERT INTO query_audit_texts (digest, body)
    SELECT x.digest, x.body FROM b, json_to_recordset(b.j->'texts') AS x(digest uuid, body text)
    ON CONFLICT DO NOTHING),
  c AS (INSERT INTO query_audit_counts AS c (bucket, user_id, data_source_id, status, n)
    SELECT x.bucket, x.user_id, x.data_source_id, x.status, x.n
    FROM b, json_to_recordset(b.j->'counts')
      AS x(bucket timestamp, user_id uuid, data_source_id uuid, status text, n bigint)
    ON CONFLICT (bucket, user_id, data_source_id, status) DO UPDATE SET n = c.n + excluded.n)
  INSERT INTO query_audit_chunks (${WRITTEN_COLUMNS.map(([c]) => c).join(', ')})
  VALUES (${WRITTEN_COLUMNS.map(([, type], i) => `$${i + 2}::${type === 'bytea' ? 'text::bytea' : type}`).join(', ')})`

/** Runs INSERT_BATCH with its parameters. */
export type RunBatchInsert = (params: (string | null)[]) => Promise<void>

/** One array element in PostgreSQL's array syntax. */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'string') return `"${value.replace(/["\\]/g, '\\$&')}"`
  return String(value)
}

/** A column value as a text parameter: arrays in PostgreSQL's array syntax. */
function columnParam(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (Array.isArray(value)) return `{${value.map(arrayElement).join(',')}}`
  return String(value)
}

/** Text digests remembered as stored, at most this many (then forgotten and relearned). */
const KNOWN_TEXTS = 20_000
/** How long one generation of remembered texts lasts (two at most are kept). */
const KNOWN_GENERATION_MS = 5 * 60_000
const HOUR = 3_600_000

/** The bucket text of hour number `hour` (`query_audit_counts.bucket`). */
function hourText(hour: number): string {
  return new Date(hour * HOUR).toISOString().slice(0, 19).replace('T', ' ')
}

/** Entries of a batch as counted: times, 0-based principals and status codes. */
export interface CountedEntries {
  n: number
  at: ArrayLike<number>
  principal: ArrayLike<number>
  status: ArrayLike<number>
}

/** A batch's entries counted per hour, user, datasource and status (`query_audit_counts`). */
export function hourlyCounts(
  principals: Pick<ChunkRow, 'p_user_id' | 'p_ds_id'>,
  e: CountedEntries,
) {
  // Principals that differ only in names or client info count together.
  const pairIndex = new Map<string, number>()
  const pairOf = principals.p_user_id.map((user, p) => {
    const pair = `${user}|${principals.p_ds_id[p]}`
    let index = pairIndex.get(pair)
    if (index === undefined) {
      index = pairIndex.size
      pairIndex.set(pair, index)
    }
    return index
  })
  const counts = new Map<
    number,
    { bucket: string; user_id: string; data_source_id: string; status: string; n: number }
  >()
  let lastHour = Number.NaN
  let lastText = ''
  for (let i = 0; i < e.n; i++) {
    const p = e.principal[i] as number
    const status = e.status[i] as number
    const hour = Math.floor((e.at[i] as number) / HOUR)
    const key = (hour * 65_536 + (pairOf[p] as number)) * 4 + status
    const known = counts.get(key)
    if (known) {
      known.n++
      continue
    }
    if (hour !== lastHour) {
      lastHour = hour
      lastText = hourText(hour)
    }
    counts.set(key, {
      bucket: lastText,
      user_id: principals.p_user_id[p] as string,
      data_source_id: principals.p_ds_id[p] as string,
      status: STATUS_NAMES[status] as string,
      n: 1,
    })
  }
  return [...counts.values()]
}

/**
 * PostgreSQL text cannot hold NUL, nor JSON a lone surrogate half: both become U+FFFD rather
 * than failing the batch.
 */
export function storable(text: string): string {
  const checked = text as string & { isWellFormed(): boolean; toWellFormed(): string }
  const whole = checked.isWellFormed() ? text : checked.toWellFormed()
  return whole.includes('\u0000') ? whole.replaceAll('\u0000', '\uFFFD') : whole
}

export class AuditIngest {
  readonly #key: Buffer | undefined
  readonly #chainId: string | undefined
  #seq = 0
  #lastHash = ''
  /** text → digest of texts known to be stored. */
  #known = new Map<string, string>()
  /**
   * The previous generation of `#known`. A text is trusted as stored for at most two
   * generations after it was last sent, never refreshed by use: retention removes texts no
   * batch refers to any more, and one sent within the last minutes is referred to by a batch
   * far younger than any retention.
   */
  #knownBefore = new Map<string, string>()
  #generationStart = Date.now()

  /** Without a key, rows are stored unlinked (no chain, no seal). */
  constructor(key?: Buffer, chainId?: string) {
    this.#key = key
    this.#chainId = key ? chainId : undefined
  }

  /** Stores `batch` in one statement; throws the store's error and keeps the head if it fails. */
  async write(run: RunBatchInsert, batch: AuditBatch): Promise<void> {
    const { row, entries, literals, newTexts, bodies } = this.#row(batch)
    let lastHash = this.#lastHash
    if (this.#key) {
      row.hash = sealChunk(this.#key, row)
      const last = row.entries - 1
      const filled = fillEntries(row, entries, literals, last)
      lastHash = entryHash(entryAt(filled, last, (d) => bodies.get(d)))
    }
    const counts = hourlyCounts(row, entries)
    const params = [
      JSON.stringify({ texts: newTexts, counts }),
      ...WRITTEN_COLUMNS.map(([column]) => columnParam(row[column])),
    ]
    try {
      await run(params)
    } catch (error) {
      if (!alreadyStored(error)) throw error
    }
    if (this.#chainId) {
      this.#seq += row.entries
      this.#lastHash = lastHash
    }
    if (
      this.#known.size + newTexts.length > KNOWN_TEXTS ||
      Date.now() - this.#generationStart > KNOWN_GENERATION_MS
    ) {
      this.#knownBefore = this.#known
      this.#known = new Map()
      this.#generationStart = Date.now()
    }
    for (const t of newTexts) this.#known.set(t.body, t.digest)
  }

  /** The stored row of `batch` (format 3), with the texts the store may not hold yet. */
  #row(batch: AuditBatch) {
    const n = batch.n
    const bodies = new Map<string, string>()
    const newTexts: { digest: string; body: string }[] = []
    // Every string of a batch is used by one of its entries: `texts` is the batch's strings.
    const texts = batch.strings.map((string) => {
      const body = storable(string)
      let digest = this.#known.get(body) ?? this.#knownBefore.get(body)
      if (digest === undefined) {
        digest = textDigest(body)
        if (!bodies.has(digest)) newTexts.push({ digest, body })
      }
      bodies.set(digest, body)
      return digest
    })
    const principals = batch.principals
    const count = principals.length / 5
    const pick = (k: number) =>
      Array.from({ length: count }, (_, p) => {
        const value = principals[p * 5 + k]
        if (value === null || value === undefined) return null
        // `client_info` keeps the first 256 characters (docs/audit.md#fields).
        return storable(k === 4 ? value.slice(0, 256) : value)
      })
    const now = Date.now()
    const at = batch.at.map((ms) => (Number.isFinite(ms) ? Math.floor(ms) : now))
    const entries = { ...batch, at }
    let first = Number.POSITIVE_INFINITY
    let last = Number.NEGATIVE_INFINITY
    let statusMask = 0
    const pCounts = new Array<number>(count * 3).fill(0)
    for (let i = 0; i < n; i++) {
      const ms = at[i] as number
      if (ms < first) first = ms
      if (ms > last) last = ms
      const status = batch.status[i] as number
      statusMask |= 1 << status
      ;(pCounts[(batch.principal[i] as number) * 3 + status] as number)++
    }
    const literals = batch.literals.map(storable)
    const row = {
      id: batch.seed,
      format: 3,
      chain_id: this.#chainId ?? null,
      first_seq: this.#chainId ? this.#seq + 1 : null,
      prev_hash: this.#chainId ? this.#lastHash : null,
      hash: null,
      first_at: first,
      last_at: last,
      entries: n,
      status_mask: statusMask,
      p_user_id: pick(0) as string[],
      p_username: pick(1) as string[],
      p_ds_id: pick(2) as string[],
      p_ds_name: pick(3) as string[],
      p_client_info: pick(4),
      texts,
      p_counts: pCounts,
      e_data: byteaText(packEntries(entries)),
      e_literals: byteaText(packLiterals(literals)),
    } as ChunkRow
    return { row, entries, literals, newTexts, bodies }
  }
}

/**
 * An earlier attempt of this very batch committed but its answer never arrived (the connection
 * dropped after COMMIT): the batch is one row, all or nothing, so it is stored, with the same
 * ids and seal. Counting it lost would report entries that are there.
 */
function alreadyStored(error: unknown): boolean {
  return sqlStateOf(error) === '23505' && constraintOf(error) === 'query_audit_chunks_pkey'
}
