const HEADER = 5

/** Builds one wire-protocol message: a one-byte code, an int32 length, then the body. */
export class WireWriter {
  #buf: Buffer

  // The first five bytes are left for the code and length, filled in by `message`.
  #len = HEADER

  constructor(size = 256) {
    this.#buf = Buffer.allocUnsafe(size + HEADER)
  }

  #ensure(extra: number): void {
    if (this.#len + extra <= this.#buf.length) return
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#len + extra))
    this.#buf.copy(next, 0, 0, this.#len)
    this.#buf = next
  }

  /** Appends a big-endian int32. */
  int32(value: number): this {
    this.#ensure(4)
    this.#buf.writeInt32BE(value, this.#len)
    this.#len += 4
    return this
  }

  /** Appends a big-endian int16. */
  int16(value: number): this {
    this.#ensure(2)
    this.#buf.writeInt16BE(value, this.#len)
    this.#len += 2
    return this
  }

  /** Appends a NUL-terminated UTF-8 string. */
  cstring(value: string): this {
    const size = Buffer.byteLength(value)
    this.#ensure(size + 1)
    this.#buf.write(value, this.#len, 'utf8')
    this.#len += size
    this.#buf[this.#len++] = 0
    return this
  }

  /** Appends a UTF-8 string without terminator. */
  string(value: string): this {
    const size = Buffer.byteLength(value)
    this.#ensure(size)
    this.#buf.write(value, this.#len, 'utf8')
    this.#len += size
    return this
  }

  /** Appends raw bytes. */
  bytes(value: Uint8Array): this {
    this.#ensure(value.length)
    this.#buf.set(value, this.#len)
    this.#len += value.length
    return this
  }

  /** Returns the message with its code and length header. */
  message(code: string): Buffer {
    this.#buf[0] = code.charCodeAt(0)
    this.#buf.writeInt32BE(this.#len - 1, 1)
    return this.#buf.subarray(0, this.#len)
  }
}
