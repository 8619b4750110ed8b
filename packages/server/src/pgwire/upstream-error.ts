import type { UpstreamErrorFields } from '@palisade/core'
import { asBuffer } from '../wire/as-buffer.js'

/** ErrorResponse/NoticeResponse field codes, as pg-protocol names them. */
const FIELDS: Readonly<Record<string, keyof UpstreamErrorFields>> = {
  S: 'severity',
  C: 'code',
  M: 'message',
  D: 'detail',
  H: 'hint',
  P: 'position',
  p: 'internalPosition',
  q: 'internalQuery',
  W: 'where',
  s: 'schema',
  t: 'table',
  c: 'column',
  d: 'dataType',
  n: 'constraint',
}

/** Decodes the fields of an upstream ErrorResponse or NoticeResponse frame. */
export function decodeErrorFields(frame: Uint8Array): UpstreamErrorFields {
  const buf = asBuffer(frame)
  const out: UpstreamErrorFields = { message: '' }
  let pos = 5
  while (pos < buf.length) {
    const type = buf[pos]
    if (type === 0 || type === undefined) break
    const end = buf.indexOf(0, pos + 1)
    if (end < 0) break
    const key = FIELDS[String.fromCharCode(type)]
    if (key) out[key] = buf.toString('utf8', pos + 1, end)
    pos = end + 1
  }
  // `V` (non-localized severity) wins over `S` when both are present.
  return out
}
