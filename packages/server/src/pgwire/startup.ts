import { asBuffer } from '../wire/as-buffer.js'
import { violation } from '../wire/wire-reader.js'

/** Request codes of the untyped first messages (protocol 3.0). */
export const StartupCode = {
  Protocol30: 196608,
  SslRequest: 80877103,
  GssEncRequest: 80877104,
  CancelRequest: 80877102,
} as const

/** The request code of an untyped startup-phase message. */
export function startupCode(bytes: Uint8Array): number {
  if (bytes.byteLength < 8) throw violation('invalid startup packet layout')
  return asBuffer(bytes).readInt32BE(4)
}

/** Parses the name/value pairs of a StartupMessage. */
export function startupParameters(bytes: Uint8Array): Map<string, string> {
  const buf = asBuffer(bytes)
  const params = new Map<string, string>()
  let pos = 8
  for (;;) {
    const end = buf.indexOf(0, pos)
    if (end < 0) throw violation('invalid startup packet layout: expected terminator')
    if (end === pos) break
    const name = buf.toString('utf8', pos, end)
    const valueEnd = buf.indexOf(0, end + 1)
    if (valueEnd < 0) throw violation('invalid startup packet layout: expected terminator')
    params.set(name, buf.toString('utf8', end + 1, valueEnd))
    pos = valueEnd + 1
  }
  return params
}

/** The process id and secret of a CancelRequest. */
export function cancelKey(bytes: Uint8Array): { processId: number; secretKey: number } {
  if (bytes.byteLength !== 16) throw violation('invalid length of cancel request')
  const buf = asBuffer(bytes)
  return { processId: buf.readInt32BE(8), secretKey: buf.readInt32BE(12) }
}
