/**
 * Upstream sockets read into one shared buffer (Node's `onread`) instead of a fresh 64 KiB one
 * per read, and skip the stream machinery a `data` event goes through: a backend answers every
 * transaction, so this is per statement. Reads run one at a time on this thread and each chunk
 * is copied out (small ones into Node's buffer pool) before the next read can reuse the buffer.
 */
const SHARED = Buffer.allocUnsafe(64 * 1024)

/** Delivers an upstream socket's bytes to one listener at a time. */
export class SocketReads {
  #listener: ((chunk: Buffer) => void) | undefined
  /** Bytes that arrived while nobody listened (between login and the session taking over). */
  #held: Buffer[] = []

  /** The socket option that makes a socket read through this object. */
  readonly onread = {
    buffer: SHARED,
    callback: (bytes: number, buffer: Uint8Array): boolean => {
      this.deliver(Buffer.from(buffer.subarray(0, bytes)))
      // Reading pauses only when the session says so (socket.pause()).
      return true
    },
  }

  /** Hands a chunk the reader owns to the listener (TLS sockets deliver their `data` here). */
  deliver(chunk: Buffer): void {
    const listener = this.#listener
    if (listener) listener(chunk)
    else this.#held.push(chunk)
  }

  /** Sets the listener (undefined: hold what arrives); it first gets what was held. */
  listen(listener: ((chunk: Buffer) => void) | undefined): void {
    this.#listener = listener
    if (!listener || this.#held.length === 0) return
    for (const chunk of this.#held.splice(0)) listener(chunk)
  }
}
