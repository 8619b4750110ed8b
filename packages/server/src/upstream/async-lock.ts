/** A FIFO mutex; `acquire` resolves with the release function. */
export class AsyncLock {
  #held = false
  readonly #waiters: Array<() => void> = []

  /** Whether someone holds the lock. */
  get held(): boolean {
    return this.#held
  }

  /** Waits for the lock. */
  async acquire(): Promise<() => void> {
    if (this.#held) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    this.#held = true
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.#waiters.shift()
      if (next) next()
      else this.#held = false
    }
  }
}
