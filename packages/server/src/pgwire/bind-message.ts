import { checkUtf8, malformed, WireReader } from '../wire/wire-reader.js'

/**
 * Checks a Bind's body after its portal and statement names (formats, values, result formats)
 * the way PostgreSQL reads it, before anything is sent upstream: counts that disagree or run past
 * the message are `08P01`, a text-format value that is not UTF-8 is `22021`. The statement's own
 * parameter count and each value's type are left to the upstream, which answers them as usual.
 * @see https://www.postgresql.org/docs/current/protocol-message-formats.html#PROTOCOL-MESSAGE-FORMATS-BIND
 */
export function checkBindBody(body: Buffer): void {
  const reader = new WireReader(body, 0)
  const formatCount = reader.uint16()
  const formats = Array.from({ length: formatCount }, () => reader.int16())
  const parameterCount = reader.uint16()
  if (formatCount > 1 && formatCount !== parameterCount) {
    throw malformed(
      `bind message has ${formatCount} parameter formats but ${parameterCount} parameters`,
    )
  }
  for (let i = 0; i < parameterCount; i++) {
    const length = reader.int32()
    if (length === -1) continue
    const value = reader.bytes(length)
    const format = formatCount === 0 ? 0 : formatCount === 1 ? formats[0] : formats[i]
    if (format === 0) checkUtf8(value)
  }
  const resultFormatCount = reader.uint16()
  for (let i = 0; i < resultFormatCount; i++) reader.int16()
  reader.end()
}
