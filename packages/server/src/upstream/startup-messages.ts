import type { BackendFrame } from './upstream.types.js'

/**
 * The backend messages an upstream sends while a session starts (authentication, parameters,
 * the cancel key, the one check query's row), decoded; everything else is `other`. After
 * startup, frames are relayed without decoding (frame-splitter.ts).
 */
export type StartupMessage =
  | { name: 'authenticationOk' }
  | { name: 'authenticationCleartextPassword' }
  | { name: 'authenticationMD5Password'; salt: Buffer }
  | { name: 'authenticationSASL'; mechanisms: string[] }
  | { name: 'authenticationSASLContinue'; data: string }
  | { name: 'authenticationSASLFinal'; data: string }
  | { name: 'authenticationOther'; code: number }
  | { name: 'parameterStatus'; parameterName: string; parameterValue: string }
  | { name: 'backendKeyData'; processId: number; secretKey: number }
  | { name: 'error'; message: string }
  | { name: 'dataRow'; fields: (string | null)[] }
  | { name: 'readyForQuery'; status: string }
  | { name: 'other'; code: number }

/** Decodes one complete frame (code byte, int32 length, body). */
export function decodeStartupMessage(frame: BackendFrame): StartupMessage {
  const bytes = Buffer.from(frame.bytes.buffer, frame.bytes.byteOffset, frame.bytes.byteLength)
  const body = bytes.subarray(5)
  switch (String.fromCharCode(frame.code)) {
    case 'R':
      return authentication(body)
    case 'S': {
      const [parameterName, after] = cstring(body, 0)
      return { name: 'parameterStatus', parameterName, parameterValue: cstring(body, after)[0] }
    }
    case 'K':
      return {
        name: 'backendKeyData',
        processId: body.readInt32BE(0),
        secretKey: body.readInt32BE(4),
      }
    case 'E':
      return { name: 'error', message: errorMessage(body) }
    case 'D':
      return { name: 'dataRow', fields: dataRowFields(body) }
    case 'Z':
      return { name: 'readyForQuery', status: String.fromCharCode(body[0] ?? 0) }
    default:
      return { name: 'other', code: frame.code }
  }
}

function authentication(body: Buffer): StartupMessage {
  const code = body.readInt32BE(0)
  switch (code) {
    case 0:
      return { name: 'authenticationOk' }
    case 3:
      return { name: 'authenticationCleartextPassword' }
    case 5:
      return { name: 'authenticationMD5Password', salt: Buffer.from(body.subarray(4, 8)) }
    case 10: {
      const mechanisms: string[] = []
      let pos = 4
      while (pos < body.length && body[pos] !== 0) {
        const [mechanism, next] = cstring(body, pos)
        mechanisms.push(mechanism)
        pos = next
      }
      return { name: 'authenticationSASL', mechanisms }
    }
    case 11:
      return { name: 'authenticationSASLContinue', data: body.toString('utf8', 4) }
    case 12:
      return { name: 'authenticationSASLFinal', data: body.toString('utf8', 4) }
    default:
      return { name: 'authenticationOther', code }
  }
}

/** The string at `pos` up to its NUL, and the position after the NUL. */
function cstring(body: Buffer, pos: number): [string, number] {
  const end = body.indexOf(0, pos)
  if (end < 0) throw new Error('malformed upstream message')
  return [body.toString('utf8', pos, end), end + 1]
}

/** The primary message (field `M`) of an ErrorResponse. */
function errorMessage(body: Buffer): string {
  let pos = 0
  while (pos < body.length && body[pos] !== 0) {
    const type = body[pos] as number
    const [value, next] = cstring(body, pos + 1)
    if (type === 0x4d) return value
    pos = next
  }
  return 'unknown error'
}

/** A DataRow's fields as text (null for SQL NULL). */
function dataRowFields(body: Buffer): (string | null)[] {
  const count = body.readInt16BE(0)
  const fields: (string | null)[] = []
  let pos = 2
  for (let i = 0; i < count; i++) {
    const length = body.readInt32BE(pos)
    pos += 4
    if (length < 0) fields.push(null)
    else {
      fields.push(body.toString('utf8', pos, pos + length))
      pos += length
    }
  }
  return fields
}
