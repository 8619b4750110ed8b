import { Frontend } from './frontend-messages.js'

/** Bytes of a refused message kept in its audit row; the rest is counted, not kept. */
export const REFUSED_TEXT_BYTES = 4096

const NAMES = new Map<number, string>([
  [Frontend.Bind, 'Bind'],
  [Frontend.Close, 'Close'],
  [Frontend.Describe, 'Describe'],
  [Frontend.Execute, 'Execute'],
  [Frontend.FunctionCall, 'FunctionCall'],
  [Frontend.Parse, 'Parse'],
  [Frontend.Query, 'Query'],
])

/**
 * The audit text of a message refused after login: what the client sent, as received. A Query
 * is its SQL, a Parse the SQL after its name; any other message is its type and body. A text
 * column holds neither NUL nor invalid UTF-8, so those (and control bytes) are written `\x00`; past
 * `REFUSED_TEXT_BYTES` the text is cut and its full size noted.
 */
export function refusedMessageText(bytes: Uint8Array): string {
  const code = bytes[0] ?? 0
  let body = bytes.subarray(Math.min(5, bytes.length))
  if (code === Frontend.Query) {
    // The terminator is the protocol's, not the client's text.
    if (body.at(-1) === 0) body = body.subarray(0, -1)
    return bounded(body, '')
  }
  if (code === Frontend.Parse) {
    const nameEnd = body.indexOf(0)
    if (nameEnd >= 0) return bounded(withoutTypes(body.subarray(nameEnd + 1)), '')
  }
  return bounded(body, `[${messageName(code)}] `)
}

/** The audit text of a message refused unread: too long, or with an impossible length. */
export function unreadMessageText(code: number, length: number): string {
  return `[${messageName(code)} message of ${length} bytes, not read]`
}

function messageName(code: number): string {
  return NAMES.get(code) ?? `message type 0x${code.toString(16).padStart(2, '0')}`
}

/** A Parse's SQL with its terminator and parameter types dropped, when they are well formed. */
function withoutTypes(rest: Uint8Array): Uint8Array {
  for (let count = 0; 3 + count * 4 <= rest.length && count < 256; count++) {
    const at = rest.length - 2 - count * 4
    if (rest[at - 1] === 0 && (((rest[at] ?? 0) << 8) | (rest[at + 1] ?? 0)) === count) {
      return rest.subarray(0, at - 1)
    }
  }
  return rest
}

function bounded(bytes: Uint8Array, prefix: string): string {
  if (bytes.length <= REFUSED_TEXT_BYTES) return prefix + escapeBytes(bytes)
  const kept = escapeBytes(bytes.subarray(0, REFUSED_TEXT_BYTES))
  return `${prefix}${kept}… [cut: ${bytes.length} bytes in all]`
}

/**
 * UTF-8 as text; control bytes (NUL among them; tab and line breaks aside) and every byte outside
 * a valid sequence as `\xNN`, so the row shows each byte that was sent.
 */
export function escapeBytes(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let out = ''
  let run = 0
  let i = 0
  while (i < buf.length) {
    const n = isControl(buf[i] ?? 0) ? 0 : sequenceLength(buf, i)
    if (n > 0) {
      i += n
      continue
    }
    out += `${buf.toString('utf8', run, i)}\\x${(buf[i] ?? 0).toString(16).padStart(2, '0')}`
    i++
    run = i
  }
  return out + buf.toString('utf8', run, i)
}

function isControl(c: number): boolean {
  return (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f
}

/** Length of the valid UTF-8 sequence at `i` (no overlongs, surrogates or code points past U+10FFFF), else 0. */
function sequenceLength(b: Buffer, i: number): number {
  const c = b[i] ?? 0
  if (c < 0x80) return 1
  const n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0
  if (n === 0 || i + n > b.length) return 0
  for (let k = 1; k < n; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return 0
  const second = b[i + 1] ?? 0
  if (c === 0xe0 && second < 0xa0) return 0
  if (c === 0xed && second > 0x9f) return 0
  if (c === 0xf0 && second < 0x90) return 0
  if (c === 0xf4 && second > 0x8f) return 0
  return n
}
