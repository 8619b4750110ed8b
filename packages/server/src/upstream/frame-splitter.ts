import { asBuffer } from '../wire/as-buffer.js'
import type { BackendFrame } from './upstream.types.js'

/**
 * Cuts a byte stream into backend messages by their 5-byte headers, keeping a partial message
 * until the rest arrives. Rows are never decoded, only framed.
 */
export class FrameSplitter {
  #pending: Buffer | undefined

  /** Adds bytes and returns the complete frames now available. */
  push(chunk: Uint8Array): BackendFrame[] {
    let buf = asBuffer(chunk)
    if (this.#pending) buf = Buffer.concat([this.#pending, buf])
    const frames: BackendFrame[] = []
    let pos = 0
    while (buf.length - pos >= 5) {
      const length = buf.readInt32BE(pos + 1)
      if (length < 4) throw new Error('malformed upstream message')
      const end = pos + 1 + length
      if (end > buf.length) break
      frames.push({ code: buf[pos] as number, bytes: buf.subarray(pos, end) })
      pos = end
    }
    this.#pending = pos < buf.length ? Buffer.from(buf.subarray(pos)) : undefined
    return frames
  }
}

/** Splits a buffer that holds whole messages only (PGlite answers). */
export function splitFrames(bytes: Uint8Array): BackendFrame[] {
  return new FrameSplitter().push(bytes)
}
