import { WireError, WireSqlState } from '../wire/wire-error.js'

/** PostgreSQL's own cap on a startup-phase packet (MAX_STARTUP_PACKET_LENGTH). */
const MAX_STARTUP_BYTES = 10_000

/**
 * Splits a client's byte stream into protocol messages. Until the StartupMessage, messages are
 * untyped (`int32 length` + body: SSLRequest, GSSENCRequest, CancelRequest, StartupMessage);
 * after it, typed (`byte type` + `int32 length` + body). Lengths are checked before anything is
 * buffered for them, so a client cannot make the proxy hold a 2 GB message. Chunks are kept as
 * they arrive and joined once per message, so a large message costs one copy, not one per chunk.
 */
export class ClientFrameReader {
  readonly #maxMessageBytes: number
  #chunks: Buffer[] = []
  #size = 0
  /** Whether the StartupMessage has been read (messages are typed from then on). */
  typed = false
  /** The typed message `next` refused by its header: type byte and declared length. */
  refused: { code: number; length: number } | undefined

  constructor(maxMessageBytes: number) {
    this.#maxMessageBytes = maxMessageBytes
  }

  /** Bytes received and not yet returned as messages. */
  get pendingBytes(): number {
    return this.#size
  }

  push(chunk: Buffer): void {
    if (chunk.byteLength === 0) return
    this.#chunks.push(chunk)
    this.#size += chunk.byteLength
  }

  /** The next complete message, or undefined until more bytes arrive; throws on a bad length. */
  next(): Buffer | undefined {
    const header = this.typed ? 5 : 4
    if (this.#size < header) return undefined
    const head = this.#peek(header)
    const length = head.readInt32BE(header - 4)
    const total = length + header - 4
    if (this.typed) {
      if (length < 4 || total > this.#maxMessageBytes) {
        this.refused = { code: head[0] ?? 0, length }
      }
      if (length < 4) throw violation(`invalid message length ${length}`)
      if (total > this.#maxMessageBytes) {
        throw new WireError({
          severity: 'FATAL',
          code: WireSqlState.ProgramLimitExceeded,
          message: `message of ${total} bytes exceeds the limit of ${this.#maxMessageBytes} bytes`,
        })
      }
    } else if (length < 8 || length > MAX_STARTUP_BYTES) {
      throw violation('invalid length of startup packet')
    }
    if (this.#size < total) return undefined
    const first = this.#peek(total)
    const message = first.subarray(0, total)
    if (first.byteLength > total) this.#chunks[0] = first.subarray(total)
    else this.#chunks.shift()
    this.#size -= total
    return message
  }

  /** At least `bytes` bytes from the front as one buffer (joining chunks only when needed). */
  #peek(bytes: number): Buffer {
    const first = this.#chunks[0] as Buffer
    if (first.byteLength >= bytes) return first
    const joined = Buffer.concat(this.#chunks, this.#size)
    this.#chunks = [joined]
    return joined
  }
}

function violation(message: string): WireError {
  return WireError.fatal(WireSqlState.ProtocolViolation, message)
}
