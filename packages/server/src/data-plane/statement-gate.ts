import type { EffectiveLimits } from '@palisade/store'
import { WireError } from '../wire/wire-error.js'

/** SQLSTATE `53400`, configuration_limit_exceeded. */
export const CONFIGURATION_LIMIT_EXCEEDED = '53400'

/** What a statement refused by a limit was refused by (metrics label). */
export type LimitRefusal = 'rate' | 'concurrency'

/** A user with rate or concurrency limits, as the gate counts them. */
export interface GatedUser {
  readonly id: string
  readonly limits: EffectiveLimits
}

/**
 * Ends an admitted statement once its answer ended; a promise when the store is told, which the
 * connection awaits before the client hears the end of its round trip (so the client's next
 * statement, on any instance, finds the place free).
 */
export type LeaveStatement = () => void | Promise<void>

/**
 * Admits the statements of users with `max_statements_per_minute` or
 * `max_concurrent_statements` (docs/roles-and-access.md#limits). `enter` returns the function
 * that ends the statement, or throws `LimitError` (53400); a promise when the counts live in the
 * store.
 */
export interface StatementGate {
  enter(user: GatedUser): LeaveStatement | Promise<LeaveStatement>
}

/** A 53400 refusal, with when to retry in its DETAIL. */
export class LimitError extends WireError {
  readonly limit: LimitRefusal
  constructor(limit: LimitRefusal, message: string, detail: string, hint: string) {
    super({ severity: 'ERROR', code: CONFIGURATION_LIMIT_EXCEEDED, message, detail, hint })
    this.limit = limit
  }
}

/** The 53400 of `max_statements_per_minute`; `retryMs` until the window ends. */
export function rateRefusal(max: number, retryMs: number): LimitError {
  return new LimitError(
    'rate',
    `too many statements: the limit is ${max} per minute (max_statements_per_minute)`,
    `The limit is reached for the current minute; retry after ${Math.max(1, Math.ceil(retryMs / 1000))} s.`,
    'Send fewer statements, or ask an administrator to raise max_statements_per_minute.',
  )
}

/** The 53400 of `max_concurrent_statements`. */
export function concurrencyRefusal(max: number): LimitError {
  return new LimitError(
    'concurrency',
    `too many concurrent statements: the limit is ${max} (max_concurrent_statements)`,
    `${max} statement${max === 1 ? ' is' : 's are'} already running for this user; retry after 1 s, once one has ended.`,
    'Run fewer statements at once, or ask an administrator to raise max_concurrent_statements.',
  )
}

const NOTHING_HELD = () => {}

/** One-minute windows: fixed, aligned to the clock's minutes (the store's buckets are too). */
export const WINDOW_MS = 60_000

interface UserCounts {
  running: number
  window: number
  count: number
}

/**
 * Counts in this process: enough with the embedded store (one instance). Rate limits use fixed
 * one-minute windows; concurrency counts the user's statements running on all its connections.
 */
export class LocalStatementGate implements StatementGate {
  readonly #users = new Map<string, UserCounts>()
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  enter(user: GatedUser): () => void {
    const { maxConcurrentStatements: concurrent, maxStatementsPerMinute: perMinute } = user.limits
    let counts = this.#users.get(user.id)
    if (!counts) {
      if (this.#users.size >= SWEEP_AT) this.#sweep()
      counts = { running: 0, window: 0, count: 0 }
      this.#users.set(user.id, counts)
    }
    if (concurrent !== undefined && counts.running >= concurrent) {
      throw concurrencyRefusal(concurrent)
    }
    if (perMinute !== undefined) {
      const now = this.#now()
      const window = Math.floor(now / WINDOW_MS)
      if (counts.window !== window) {
        counts.window = window
        counts.count = 0
      }
      if (counts.count >= perMinute) throw rateRefusal(perMinute, (window + 1) * WINDOW_MS - now)
      counts.count++
    }
    if (concurrent === undefined) return NOTHING_HELD
    counts.running++
    const held = counts
    let released = false
    return () => {
      if (released) return
      released = true
      held.running--
    }
  }

  /** Forgets the users with nothing running and no count in the current window. */
  #sweep(): void {
    const window = Math.floor(this.#now() / WINDOW_MS)
    for (const [id, counts] of this.#users) {
      if (counts.running === 0 && counts.window < window) this.#users.delete(id)
    }
  }
}

/** Users kept before the gate forgets those with nothing to remember. */
const SWEEP_AT = 10_000
