/** How long a mutation waits for other instances to confirm its change (default). */
export const CONFIRM_TIMEOUT_MS = 2000

/** Confirmations of one change still to come. */
export interface PendingConfirmations {
  /** Resolves once all came, or after `timeoutMs` with the ids that did not. */
  wait(timeoutMs: number): Promise<string[]>
  /** Stops expecting them (the transaction did not commit). */
  cancel(): void
}

interface Waiter {
  readonly pending: Set<string>
  readonly done: () => void
}

/**
 * The instances that still have to confirm each published change; an instance confirms once it
 * has marked its affected sessions. An instance that lets a wait time out (frozen, or its listener
 * dropped before the change reached it, in which case it marks every session on reconnecting) is
 * not waited for again until it is heard from, so it delays one mutation, not every one.
 */
export class ChangeConfirmations {
  readonly #waiters = new Map<number, Waiter>()
  readonly #silent = new Set<string>()

  /**
   * Starts expecting confirmations of change `seq` from `instanceIds`. Call it before the commit:
   * a confirmation can arrive before the commit's own response does.
   */
  expect(seq: number, instanceIds: readonly string[]): PendingConfirmations {
    const pending = new Set(instanceIds.filter((id) => !this.#silent.has(id)))
    let done = () => {}
    const all = new Promise<void>((resolve) => {
      done = resolve
    })
    if (pending.size > 0) this.#waiters.set(seq, { pending, done })
    return {
      wait: async (timeoutMs) => {
        if (pending.size === 0) return []
        let timer: NodeJS.Timeout | undefined
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs)
        })
        await Promise.race([all, late])
        clearTimeout(timer)
        this.#waiters.delete(seq)
        for (const id of pending) this.#silent.add(id)
        return [...pending]
      },
      cancel: () => {
        this.#waiters.delete(seq)
      },
    }
  }

  /** Instance `from` confirmed change `seq`. */
  confirm(from: string, seq: number): void {
    this.heard(from)
    const waiter = this.#waiters.get(seq)
    if (waiter?.pending.delete(from) && waiter.pending.size === 0) waiter.done()
  }

  /** Any message from `from` shows it is alive again. */
  heard(from: string): void {
    this.#silent.delete(from)
  }
}
