import type { BackendFrame } from './upstream.types.js'

/** A queue of backend frames with one waiting reader; a failure rejects the reader. */
export class FrameQueue {
  #frames: BackendFrame[] = []
  #bytes = 0
  #waiter: { resolve: (f: BackendFrame[]) => void; reject: (e: Error) => void } | undefined
  #failure: Error | undefined

  /** Adds frames and wakes the reader. */
  push(frames: readonly BackendFrame[]): void {
    if (frames.length === 0) return
    for (const f of frames) {
      this.#frames.push(f)
      this.#bytes += f.bytes.byteLength
    }
    const waiter = this.#waiter
    if (waiter) {
      this.#waiter = undefined
      waiter.resolve(this.#take())
    }
  }

  /** Marks the source as failed: the current and every later read rejects. */
  fail(error: Error): void {
    this.#failure ??= error
    const waiter = this.#waiter
    this.#waiter = undefined
    waiter?.reject(error)
  }

  /**
   * Rejects the waiting reader with `error` without failing the source: the session is taken
   * from a reader that no longer needs it (its client left) and read by another.
   */
  interrupt(error: Error): void {
    const waiter = this.#waiter
    this.#waiter = undefined
    waiter?.reject(error)
  }

  /** Drops anything queued (the session goes back to a pool). */
  clear(): void {
    this.#frames = []
    this.#bytes = 0
  }

  /** Bytes of the frames queued and not yet read. */
  get bufferedBytes(): number {
    return this.#bytes
  }

  /** Resolves with every queued frame, waiting for at least one. */
  read(): Promise<BackendFrame[]> {
    if (this.#frames.length > 0) return Promise.resolve(this.#take())
    if (this.#failure) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject }
    })
  }

  #take(): BackendFrame[] {
    const out = this.#frames
    this.#frames = []
    this.#bytes = 0
    return out
  }
}
