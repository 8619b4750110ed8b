import type { SessionInput } from '@palisade/core'

/** Longest a login reuses a session input read for an earlier one. */
const MAX_AGE_MS = 10_000
/** Users × datasources kept; the least recently used goes first. */
const MAX_ENTRIES = 1000

/**
 * The session inputs of recent logins, so a client that connects again (a pool, or one
 * connection per transaction) does not read its user, roles, access and policies from the store
 * each time. Every committed change empties it (`clear`, from the store's change feed), a grant
 * window ends an entry when it starts or ends (`validUntil`), and an entry lives 10 s at most.
 * A denial is never kept: it is read again at the next login.
 */
export class SessionInputCache {
  readonly #entries = new Map<string, { input: SessionInput; expires: number }>()
  /** Counts `clear` calls: a read that started before one is not kept. */
  #generation = 0

  /** Forgets every entry: a change was committed. */
  clear(): void {
    this.#generation++
    this.#entries.clear()
  }

  /** The session input of `username` on `datasourceName`, from `read` unless kept. */
  async get(
    username: string,
    datasourceName: string,
    read: () => Promise<SessionInput | null>,
  ): Promise<SessionInput | null> {
    const key = `${username}\u0000${datasourceName}`
    const now = Date.now()
    const kept = this.#entries.get(key)
    if (kept) {
      this.#entries.delete(key)
      if (kept.expires > now) {
        this.#entries.set(key, kept)
        return kept.input
      }
    }
    const generation = this.#generation
    const input = await read()
    if (input && generation === this.#generation) {
      const expires = Math.min(now + MAX_AGE_MS, input.validUntil ?? Number.POSITIVE_INFINITY)
      this.#entries.set(key, { input, expires })
      if (this.#entries.size > MAX_ENTRIES) {
        const oldest = this.#entries.keys().next().value
        if (oldest !== undefined) this.#entries.delete(oldest)
      }
    }
    return input
  }
}
