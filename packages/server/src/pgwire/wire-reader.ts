import { asBuffer } from './as-buffer.js'
import { WireError, WireSqlState } from './wire-error.js'

/**
 * Reads the body of one client message. Every read is bounds-checked: a message shorter than
 * its fields claim is a protocol violation, never an exception from deep inside a handler.
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
    if (n < 0 || this.#pos + n > this.#buf.length) throw violation('message is too short')
  }

  /** Reads a big-endian int32. */
  int32(): number {
    this.#need(4)
    const v = this.#buf.readInt32BE(this.#pos)
    this.#pos += 4
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

  /** Reads a NUL-terminated UTF-8 string. */
  cstring(): string {
    const end = this.#buf.indexOf(0, this.#pos)
    if (end < 0) throw violation('unterminated string in message')
    const value = this.#buf.toString('utf8', this.#pos, end)
    this.#pos = end + 1
    return value
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

/** A FATAL 08P01 protocol violation. */
export function violation(message: string): WireError {
  return WireError.fatal(WireSqlState.ProtocolViolation, message)
}
