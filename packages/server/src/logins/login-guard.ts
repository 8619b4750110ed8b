import type { LoginAuditRecord, LoginPlane } from '@palisade/store'
import type { ConsoleSignInRefusal } from '../sso/console-sign-in-refusals.js'
import type { TokenLoginRefusal } from '../sso/token-logins.js'
import { LoginThrottle, type ThrottleDecision } from './login-throttle.js'

/** One login attempt: who, from where, on which plane (and database, on the data plane). */
export interface LoginAttempt {
  plane: LoginPlane
  /** The user name as typed; it may name no user. */
  username: string
  address: string
  datasource?: string | undefined
}

/**
 * Why a login failed, for the audit and the log (never for the client); token logins add the
 * refusals of docs/sso.md (`token_expired`, `token_wrong_audience`, `unknown_issuer`, ...).
 */
export type FailureReason =
  | 'unknown_user'
  | 'inactive_user'
  | 'wrong_password'
  | 'too_long'
  | TokenLoginRefusal
  | ConsoleSignInRefusal

/** A structured log line for fail2ban-style filters (docs/operations.md, "Logs"). */
export type LoginLogLine =
  | { event: 'login_failed'; attempt: LoginAttempt; reason: FailureReason }
  | {
      event: 'login_throttled'
      attempt: LoginAttempt
      scope: 'address' | 'account'
      retryAfterMs: number
    }

/**
 * The failed-login policy of both planes in one place: the throttle decides, and every failure
 * and every throttled attempt is written to the login audit and the operator log.
 */
export class LoginGuard {
  readonly throttle: LoginThrottle
  readonly #audit: (record: LoginAuditRecord) => void
  readonly #log: (line: LoginLogLine) => void
  readonly #broadcast: (scope: 'address' | 'account', key: string) => void

  /** `broadcast` tells the other instances on the same store about a cleared throttle. */
  constructor(
    throttle: LoginThrottle = new LoginThrottle(),
    audit: (record: LoginAuditRecord) => void = () => {},
    log: (line: LoginLogLine) => void = () => {},
    broadcast: (scope: 'address' | 'account', key: string) => void = () => {},
  ) {
    this.throttle = throttle
    this.#audit = audit
    this.#log = log
    this.#broadcast = broadcast
  }

  /** Whether the attempt may be checked; a throttled one is audited and logged here. */
  check(attempt: LoginAttempt): ThrottleDecision {
    const decision = this.throttle.check(attempt.username, attempt.address)
    if (decision.throttled) {
      this.#audit({
        ...record(attempt),
        outcome: 'throttled',
        reason: `throttled_${decision.scope}`,
      })
      this.#log({
        event: 'login_throttled',
        attempt,
        scope: decision.scope,
        retryAfterMs: decision.retryAfterMs,
      })
    }
    return decision
  }

  /** A failed attempt: counted, audited, logged. */
  failed(attempt: LoginAttempt, reason: FailureReason): void {
    this.throttle.failed(attempt.username, attempt.address)
    this.#audit({ ...record(attempt), outcome: 'failed', reason })
    this.#log({ event: 'login_failed', attempt, reason })
  }

  /**
   * An admin cleared a key: its failures are forgotten here and on the other instances, and
   * the clearing is audited.
   */
  cleared(scope: 'address' | 'account', key: string, actorId: string): void {
    this.throttle.clear(scope, key)
    this.#broadcast(scope, key)
    this.#audit({
      plane: 'admin',
      outcome: 'cleared',
      reason: `cleared_${scope}`,
      ...(scope === 'address' ? { client_address: key } : { username: key }),
      actor_id: actorId,
    })
  }

  /** A successful attempt: clears what its address failed for this account. */
  succeeded(attempt: LoginAttempt): void {
    this.throttle.succeeded(attempt.username, attempt.address)
  }
}

function record(attempt: LoginAttempt): Omit<LoginAuditRecord, 'outcome' | 'reason'> {
  return {
    plane: attempt.plane,
    username: attempt.username,
    client_address: attempt.address,
    datasource_name: attempt.datasource ?? null,
  }
}
