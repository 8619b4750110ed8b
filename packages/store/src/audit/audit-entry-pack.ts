import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { AuditBatch } from './audit-batch.js'

/**
 * The entries of a format-3 batch (docs/audit.md#how-rows-are-stored), packed: storing a batch
 * then costs the store one compressed value instead of parsing an array element per entry and
 * column, which was most of its work per statement. Entry fields are stored column by column
 * (each column's values side by side compress best), little-endian, in this order:
 *
 * | field          | type    | meaning                                                       |
 * | -------------- | ------- | ------------------------------------------------------------- |
 * | at             | float64 | ms since the epoch (an integer)                               |
 * | principal      | uint16  | 0-based into the batch's `p_*` arrays                         |
 * | original       | int32   | 0-based into the batch's `texts`, -1 none                     |
 * | rewritten      | int32   | as `original`                                                 |
 * | policies       | int32   | as `original`                                                 |
 * | error          | int32   | as `original`                                                 |
 * | shadow         | int32   | as `original`                                                 |
 * | literal count  | int16   | literals cut out of a templated statement, -1 not templated   |
 * | elapsed        | int32   | ms, -1 none                                                   |
 * | status         | uint8   | 0 success, 1 error, 2 denied                                  |
 * | shadow denied  | int8    | -1 none, 0 false, 1 true                                      |
 *
 * The literals of all entries, in entry order, are one JSON array of strings (`e_literals`).
 * Both values are raw-deflate compressed; PostgreSQL does not compress them again.
 */

/** Bytes per entry in the packed columns. */
export const PACKED_ENTRY_BYTES = 38

/** The packed columns of a batch, as the serving thread built them (audit-batch.ts). */
export type EntryColumns = Pick<
  AuditBatch,
  | 'n'
  | 'at'
  | 'principal'
  | 'original'
  | 'rewritten'
  | 'policies'
  | 'error'
  | 'shadow'
  | 'literalCount'
  | 'elapsed'
  | 'status'
  | 'shadowDenied'
>

/** Where each packed column starts, for `n` entries. */
function offsets(n: number) {
  return {
    at: 0,
    principal: 8 * n,
    texts: 10 * n,
    literalCount: 30 * n,
    elapsed: 32 * n,
    status: 36 * n,
    shadowDenied: 37 * n,
  }
}

const TEXT_FIELDS = ['original', 'rewritten', 'policies', 'error', 'shadow'] as const

/** Compresses the entries of `c` (their `at` already whole milliseconds). */
export function packEntries(c: EntryColumns): Buffer {
  const n = c.n
  const o = offsets(n)
  const bytes = Buffer.alloc(PACKED_ENTRY_BYTES * n)
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let i = 0; i < n; i++) {
    v.setFloat64(o.at + 8 * i, c.at[i] as number, true)
    v.setUint16(o.principal + 2 * i, c.principal[i] as number, true)
    v.setInt16(o.literalCount + 2 * i, c.literalCount[i] as number, true)
    v.setInt32(o.elapsed + 4 * i, c.elapsed[i] as number, true)
    v.setUint8(o.status + i, c.status[i] as number)
    v.setInt8(o.shadowDenied + i, c.shadowDenied[i] as number)
  }
  TEXT_FIELDS.forEach((field, k) => {
    const column = c[field]
    const start = o.texts + 4 * n * k
    for (let i = 0; i < n; i++) v.setInt32(start + 4 * i, column[i] as number, true)
  })
  return deflateRawSync(bytes, { level: 1 })
}

/** The entries packed by packEntries; throws if `packed` does not hold `n` of them. */
export function unpackEntries(packed: Buffer, n: number): EntryColumns {
  const bytes = inflateRawSync(packed)
  if (bytes.byteLength !== PACKED_ENTRY_BYTES * n) {
    throw new Error(`packed entries hold ${bytes.byteLength} bytes, not ${PACKED_ENTRY_BYTES * n}`)
  }
  const o = offsets(n)
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const c: EntryColumns = {
    n,
    at: new Float64Array(n),
    principal: new Uint16Array(n),
    original: new Int32Array(n),
    rewritten: new Int32Array(n),
    policies: new Int32Array(n),
    error: new Int32Array(n),
    shadow: new Int32Array(n),
    literalCount: new Int16Array(n),
    elapsed: new Int32Array(n),
    status: new Uint8Array(n),
    shadowDenied: new Int8Array(n),
  }
  for (let i = 0; i < n; i++) {
    c.at[i] = v.getFloat64(o.at + 8 * i, true)
    c.principal[i] = v.getUint16(o.principal + 2 * i, true)
    c.literalCount[i] = v.getInt16(o.literalCount + 2 * i, true)
    c.elapsed[i] = v.getInt32(o.elapsed + 4 * i, true)
    c.status[i] = v.getUint8(o.status + i)
    c.shadowDenied[i] = v.getInt8(o.shadowDenied + i)
  }
  TEXT_FIELDS.forEach((field, k) => {
    const column = c[field]
    const start = o.texts + 4 * n * k
    for (let i = 0; i < n; i++) column[i] = v.getInt32(start + 4 * i, true)
  })
  return c
}

/** The literals of every entry, compressed; null when no entry has any. */
export function packLiterals(literals: readonly string[]): Buffer | null {
  if (literals.length === 0) return null
  return deflateRawSync(Buffer.from(JSON.stringify(literals), 'utf8'), { level: 1 })
}

/** The literals packed by packLiterals. */
export function unpackLiterals(packed: Buffer | null): string[] {
  if (packed === null) return []
  const literals: unknown = JSON.parse(inflateRawSync(packed).toString('utf8'))
  if (!Array.isArray(literals) || !literals.every((l) => typeof l === 'string')) {
    throw new Error('packed literals are not a list of strings')
  }
  return literals
}

/** A bytea value as PostgreSQL's hex text (a parameter or `row_to_json` gives this form). */
export function byteaText(bytes: Buffer | null): string | null {
  return bytes === null ? null : `\\x${bytes.toString('hex')}`
}

/** The bytes of a bytea in hex text form. */
export function byteaBytes(text: string | null | undefined): Buffer | null {
  if (text === null || text === undefined) return null
  if (!text.startsWith('\\x')) throw new Error('bytea is not in hex form')
  return Buffer.from(text.slice(2), 'hex')
}
