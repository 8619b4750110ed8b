import { randomInt } from 'node:crypto'

/** Something a CancelRequest can reach: a client connection's bound upstream statement. */
export interface Cancellable {
  cancel(): Promise<void>
}

/**
 * Maps the BackendKeyData given to each client to its connection, so a CancelRequest (sent on
 * a new connection) reaches the bound upstream session. Keys are random: a guessed process id
 * without its secret cancels nothing.
 */
export class CancelRegistry {
  readonly #entries = new Map<number, { secret: number; target: Cancellable }>()

  /** Registers a connection; returns its key and the function that unregisters it. */
  register(target: Cancellable): { processId: number; secretKey: number; unregister: () => void } {
    let processId = randomInt(1, 2 ** 31 - 1)
    while (this.#entries.has(processId)) processId = randomInt(1, 2 ** 31 - 1)
    const secretKey = randomInt(-(2 ** 31), 2 ** 31 - 1)
    this.#entries.set(processId, { secret: secretKey, target })
    return { processId, secretKey, unregister: () => this.#entries.delete(processId) }
  }

  /** Forwards a cancel when the key matches; unknown keys are ignored, as PostgreSQL does. */
  async cancel(processId: number, secretKey: number): Promise<void> {
    const entry = this.#entries.get(processId)
    if (entry && entry.secret === secretKey) await entry.target.cancel()
  }
}
