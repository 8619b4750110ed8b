import { isUtf8 } from 'node:buffer'
import { asBuffer } from './as-buffer.js'
import { WireError, WireSqlState } from './wire-error.js'

/**
 * Reads the body of one client message. Every read is bounds-checked: a message shorter than
 * its fields claim is a protocol violation, never an exception from deep inside a handler. The
 * errors are PostgreSQL's (`08P01` ERRORs, `22021` for text that is not UTF-8); during start-up
 * and authentication the connection handler makes them FATAL, as PostgreSQL does.
 */
export class WireReader {
  readonly #buf: Buffer
  #pos: number

  constructor(bytes: Uint8Array, offset = 5) {
    this.#buf = asBuffer(bytes)
    this.#pos = offset
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.#buf.length - this.#pos
  }

  #need(n: number): void {
    if (n < 0 || this.#pos + n > this.#buf.length) {
      throw malformed('insufficient data left in message')
    }
  }

  /** Reads a big-endian int32. */
  int32(): number {
    this.#need(4)
    const v = this.#buf.readInt32BE(this.#pos)
    this.#pos += 4
    return v
  }

  /** Reads a big-endian unsigned int16 (a count). */
  uint16(): number {
    this.#need(2)
    const v = this.#buf.readUInt16BE(this.#pos)
    this.#pos += 2
    return v
  }

  /** Reads a big-endian int16. */
  int16(): number {
    this.#need(2)
    const v = this.#buf.readInt16BE(this.#pos)
    this.#pos += 2
    return v
  }

  /** Reads one byte. */
  byte(): number {
    this.#need(1)
    return this.#buf[this.#pos++] as number
  }

  /** Reads a NUL-terminated UTF-8 string; invalid UTF-8 is refused, never replaced. */
  cstring(): string {
    const buf = this.#buf
    const start = this.#pos
    const end = buf.indexOf(0, start)
    if (end < 0) throw malformed('invalid string in message')
    this.#pos = end + 1
    // Names and most SQL are ASCII: read as such without a native UTF-8 check.
    if (isAscii(buf, start, end)) return buf.toString('latin1', start, end)
    checkUtf8(buf, start, end)
    return buf.toString('utf8', start, end)
  }

  /** Ends the message: bytes left over make it malformed. */
  end(): void {
    if (this.#pos !== this.#buf.length) throw malformed('invalid message format')
  }

  /** Reads `n` raw bytes. */
  bytes(n: number): Buffer {
    this.#need(n)
    const value = this.#buf.subarray(this.#pos, this.#pos + n)
    this.#pos += n
    return value
  }

  /** The unread rest of the message. */
  rest(): Buffer {
    const value = this.#buf.subarray(this.#pos)
    this.#pos = this.#buf.length
    return value
  }
}

/** An 08P01 ERROR: a message whose fields do not add up, as PostgreSQL words it. */
export function malformed(message: string): WireError {
  return WireError.error(WireSqlState.ProtocolViolation, message)
}

/**
 * Whether `bytes[start, end)` is short ASCII: checked here, as a native call costs more than
 * the loop for the names and values a statement carries.
 */
export function isAscii(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start > ASCII_LOOP_MAX) return false
  for (let i = start; i < end; i++) if ((bytes[i] as number) >= 0x80) return false
  return true
}
const ASCII_LOOP_MAX = 256

/**
 * Refuses `bytes[start, end)` when it is not valid UTF-8, with PostgreSQL's `22021` and its byte
 * listing. Callers try `isAscii` first where the text is usually short.
 */
export function checkUtf8(bytes: Uint8Array, start = 0, end = bytes.length): void {
  const text = bytes.subarray(start, end)
  if (isUtf8(text)) return
  throw WireError.error(
    WireSqlState.CharacterNotInRepertoire,
    `invalid byte sequence for encoding "UTF8": ${invalidSequence(text)}`,
  )
}

/** The bytes of the first invalid character, as PostgreSQL lists them (`0xc3 0x28`). */
function invalidSequence(bytes: Uint8Array): string {
  let pos = 0
  while (pos < bytes.length) {
    const lead = bytes[pos] as number
    // PostgreSQL's character length by the lead byte (pg_utf8_mblen).
    const length =
      (lead & 0xe0) === 0xc0 ? 2 : (lead & 0xf0) === 0xe0 ? 3 : (lead & 0xf8) === 0xf0 ? 4 : 1
    const char = bytes.subarray(pos, pos + length)
    if (lead === 0 || !isUtf8(char) || char.length < length) {
      return Array.from(char, (b) => `0x${b.toString(16).padStart(2, '0')}`).join(' ')
    }
    pos += length
  }
  return ''
}

/** A FATAL 08P01 protocol violation. */
export function violation(message: string): WireError {
  return WireError.fatal(WireSqlState.ProtocolViolation, message)
}
