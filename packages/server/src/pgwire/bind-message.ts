import { checkUtf8, isAscii, malformed } from '../wire/wire-reader.js'

/**
 * Checks a Bind's body after its portal and statement names (formats, values, result formats)
 * the way PostgreSQL reads it, before anything is sent upstream: counts that disagree or run past
 * the message are `08P01`, a text-format value that is not UTF-8 is `22021`. The statement's own
 * parameter count and each value's type are left to the upstream, which answers them as usual.
 * Read with offsets, not a reader: it runs for every Bind.
 * @see https://www.postgresql.org/docs/current/protocol-message-formats.html#PROTOCOL-MESSAGE-FORMATS-BIND
 */
export function checkBindBody(body: Buffer): void {
  const size = body.length
  const need = (at: number, n: number) => {
    if (n < 0 || at + n > size) throw malformed('insufficient data left in message')
  }
  need(0, 2)
  const formatCount = body.readUInt16BE(0)
  let at = 2
  need(at, 2 * formatCount)
  const formatsAt = at
  at += 2 * formatCount
  need(at, 2)
  const parameterCount = body.readUInt16BE(at)
  at += 2
  if (formatCount > 1 && formatCount !== parameterCount) {
    throw malformed(
      `bind message has ${formatCount} parameter formats but ${parameterCount} parameters`,
    )
  }
  for (let i = 0; i < parameterCount; i++) {
    need(at, 4)
    const length = body.readInt32BE(at)
    at += 4
    if (length === -1) continue
    need(at, length)
    const format =
      formatCount === 0 ? 0 : body.readInt16BE(formatsAt + (formatCount === 1 ? 0 : 2 * i))
    if (format === 0 && !isAscii(body, at, at + length)) checkUtf8(body, at, at + length)
    at += length
  }
  need(at, 2)
  const resultFormatCount = body.readUInt16BE(at)
  at += 2
  need(at, 2 * resultFormatCount)
  at += 2 * resultFormatCount
  if (at !== size) throw malformed('invalid message format')
}
