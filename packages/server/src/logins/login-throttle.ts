/** Settings of the failed-login throttle (docs/operations.md, "Failed logins"). */
export interface LoginThrottleConfig {
  /** Failures older than this are forgotten (default 15 min). */
  windowMs: number
  /** Failures from one address, within the window, before it is throttled (default 20; 0: never). */
  addressFailures: number
  /** Failures on one account name, from addresses it never logged in from (default 10; 0: never). */
  accountFailures: number
  /** The first delay past a threshold; it doubles with every further failure (default 1 s). */
  baseDelayMs: number
  /** The longest delay (default 60 s). */
  maxDelayMs: number
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottleConfig = {
  windowMs: 15 * 60_000,
  addressFailures: 20,
  accountFailures: 10,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
}

/** What a throttle is keyed by: a source address, or an account name (known or not). */
export type ThrottleScope = 'address' | 'account'

/** The answer for one login attempt. */
export type ThrottleDecision =
  | { throttled: false }
  | {
      throttled: true
      scope: ThrottleScope
      /** Until the key takes its next checked attempt. */
      retryAfterMs: number
      /** The delay the key has reached (the data plane holds a throttled attempt this long). */
      delayMs: number
    }

/** A key that is throttled now (admin API `GET /login-throttles`). */
export interface ThrottleEntry {
  scope: ThrottleScope
  key: string
  failures: number
  throttledUntil: Date
}

interface Failure {
  at: number
  /** The other key: the account name of an address's failure, the address of an account's. */
  other: string
}

interface Tracked {
  failures: Failure[]
  /** No checked attempt before this time (ms since the epoch); 0 when not locked. */
  lockedUntil: number
}

/** Keys tracked per scope; past it the least recently failed one is forgotten. */
const MAX_KEYS = 50_000
/** Account/address pairs remembered as having logged in. */
const MAX_KNOWN = 100_000
/** How long a successful login keeps its address trusted for the account. */
const KNOWN_MS = 30 * 24 * 3_600_000

/**
 * Counts failed logins per source address and per account name in a sliding window, for both
 * planes (the same password is guessed on either). Past a threshold a key is locked for a delay
 * that doubles with every further failure; while locked, attempts are answered as failed without
 * checking the password (the admin API says 429), so opening many connections at once does not
 * buy more guesses. Account names are keyed as typed, known or not, so a throttle tells nothing
 * about which accounts exist. The account limit only applies to addresses the account has not
 * logged in from: an attacker elsewhere cannot lock the real user out of a machine they use.
 * A successful login clears what its address failed for that account. Counters live in this
 * process (docs/operations.md says what that means for several instances).
 */
export class LoginThrottle {
  readonly config: LoginThrottleConfig
  readonly #now: () => number
  readonly #addresses = new Map<string, Tracked>()
  readonly #accounts = new Map<string, Tracked>()
  readonly #known = new Map<string, number>()

  constructor(config: Partial<LoginThrottleConfig> = {}, now: () => number = Date.now) {
    this.config = { ...DEFAULT_LOGIN_THROTTLE, ...definedOnly(config) }
    this.#now = now
    const { windowMs, addressFailures, accountFailures, baseDelayMs, maxDelayMs } = this.config
    const whole = (n: number, min: number) => Number.isInteger(n) && n >= min
    if (!whole(windowMs, 1)) throw new Error('the login throttle window must be at least 1 ms')
    if (!whole(addressFailures, 0) || !whole(accountFailures, 0)) {
      throw new Error('login throttle failure counts must be integers of at least 0')
    }
    if (!whole(baseDelayMs, 1) || !whole(maxDelayMs, baseDelayMs)) {
      throw new Error('login throttle delays must be whole ms, the maximum at least the base')
    }
  }

  /**
   * Decides whether an attempt may be checked. A key past its threshold and not locked lets one
   * attempt through and locks at once, so parallel attempts wait for that one's outcome.
   */
  check(account: string, address: string): ThrottleDecision {
    const now = this.#now()
    const byAddress = this.#decide('address', address, now)
    if (byAddress.throttled) return byAddress
    // An attempt that names no account (a console sign-in refused before its ID token named
    // one) is its address's alone: a shared '' account would let anyone lock everyone out.
    if (account === '' || this.#isKnown(account, address, now)) return { throttled: false }
    return this.#decide('account', account, now)
  }

  /** Counts a failed attempt (a wrong password, an unknown or inactive user). */
  failed(account: string, address: string): void {
    const now = this.#now()
    if (this.config.addressFailures > 0) {
      this.#add(this.#addresses, address, account, now, this.config.addressFailures)
    }
    if (account === '') return
    if (this.config.accountFailures > 0 && !this.#isKnown(account, address, now)) {
      this.#add(this.#accounts, account, address, now, this.config.accountFailures)
    }
  }

  /** A successful login: its address is trusted for the account and loses that account's failures. */
  succeeded(account: string, address: string): void {
    const now = this.#now()
    const pair = knownKey(account, address)
    this.#known.delete(pair)
    this.#known.set(pair, now + KNOWN_MS)
    if (this.#known.size > MAX_KNOWN) this.#known.delete(this.#known.keys().next().value as string)
    this.#forget(this.#addresses, address, (f) => f.other === account)
    this.#forget(this.#accounts, account, (f) => f.other === address)
  }

  /** Keys locked now, most recently failed first. */
  list(): ThrottleEntry[] {
    const now = this.#now()
    const entries: ThrottleEntry[] = []
    for (const [scope, map] of [
      ['address', this.#addresses],
      ['account', this.#accounts],
    ] as const) {
      for (const [key, tracked] of map) {
        const failures = this.#live(tracked, now)
        if (tracked.lockedUntil > now && failures >= this.#threshold(scope)) {
          entries.push({ scope, key, failures, throttledUntil: new Date(tracked.lockedUntil) })
        }
      }
    }
    return entries.sort((a, b) => b.throttledUntil.getTime() - a.throttledUntil.getTime())
  }

  /** Forgets one key's failures; returns whether it had any. */
  clear(scope: ThrottleScope, key: string): boolean {
    return (scope === 'address' ? this.#addresses : this.#accounts).delete(key)
  }

  #threshold(scope: ThrottleScope): number {
    return scope === 'address' ? this.config.addressFailures : this.config.accountFailures
  }

  #decide(scope: ThrottleScope, key: string, now: number): ThrottleDecision {
    const threshold = this.#threshold(scope)
    const tracked = (scope === 'address' ? this.#addresses : this.#accounts).get(key)
    if (threshold === 0 || !tracked) return { throttled: false }
    const failures = this.#live(tracked, now)
    if (failures < threshold) return { throttled: false }
    const delayMs = this.#delay(failures, threshold)
    if (tracked.lockedUntil > now) {
      return { throttled: true, scope, retryAfterMs: tracked.lockedUntil - now, delayMs }
    }
    tracked.lockedUntil = now + delayMs
    return { throttled: false }
  }

  /** 1×, 2×, 4× … the base delay for the threshold-th, next, … failure, up to the maximum. */
  #delay(failures: number, threshold: number): number {
    const { baseDelayMs, maxDelayMs } = this.config
    const steps = Math.min(failures - threshold, 30)
    return Math.min(maxDelayMs, baseDelayMs * 2 ** steps)
  }

  /** Drops failures that left the window; returns how many remain. */
  #live(tracked: Tracked, now: number): number {
    const from = now - this.config.windowMs
    let i = 0
    while (i < tracked.failures.length && (tracked.failures[i] as Failure).at <= from) i++
    if (i > 0) tracked.failures.splice(0, i)
    return tracked.failures.length
  }

  #add(map: Map<string, Tracked>, key: string, other: string, now: number, threshold: number) {
    const tracked = map.get(key) ?? { failures: [], lockedUntil: 0 }
    map.delete(key)
    map.set(key, tracked)
    this.#live(tracked, now)
    tracked.failures.push({ at: now, other })
    // Past the threshold only the count matters, and the delay stops growing after ~30 steps.
    if (tracked.failures.length > threshold + 32) tracked.failures.shift()
    if (tracked.failures.length >= threshold) {
      tracked.lockedUntil = now + this.#delay(tracked.failures.length, threshold)
    }
    if (map.size > MAX_KEYS) map.delete(map.keys().next().value as string)
  }

  #forget(map: Map<string, Tracked>, key: string, drop: (failure: Failure) => boolean): void {
    const tracked = map.get(key)
    if (!tracked) return
    tracked.failures = tracked.failures.filter((f) => !drop(f))
    if (tracked.failures.length === 0) map.delete(key)
    else if (
      tracked.failures.length < this.#threshold(map === this.#addresses ? 'address' : 'account')
    )
      tracked.lockedUntil = 0
  }

  #isKnown(account: string, address: string, now: number): boolean {
    const until = this.#known.get(knownKey(account, address))
    return until !== undefined && until > now
  }
}

function knownKey(account: string, address: string): string {
  return `${account}\u0000${address}`
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
