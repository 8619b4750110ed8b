import { WireError, WireSqlState } from '../wire/wire-error.js'
import { connectPostgres } from './postgres-connect.js'
import { PostgresSession } from './postgres-upstream.js'
import { type BackendLender, TransactionSession } from './transaction-session.js'
import { UnsafeUpstreamError } from './unsafe-casts.js'
import type {
  PostgresUpstreamConfig,
  UpstreamEvent,
  UpstreamPoolState,
  UpstreamProvider,
  UpstreamSession,
} from './upstream.types.js'

interface Waiter {
  resolve: (session: PostgresSession) => void
  reject: (error: Error) => void
  /** When it gives up (Date.now() time), after waiting `timeoutMs`. */
  deadline: number
  timeoutMs: number
  /** It waits for a session of its own (session mode): the error names the connection limit. */
  verify: boolean
}

/** A transaction-pooled backend idle this long is checked for unsafe casts before reuse. */
const RECHECK_AFTER_MS = 1000

/**
 * A warm per-datasource pool of upstream sessions. Up to `poolSize` sessions exist; a client
 * that finds none free waits, and gets FATAL 53300 after `timeoutMs`. In `session` mode one
 * upstream session is bound to one client connection for the client's lifetime; in
 * `transaction` mode a client borrows one per transaction (transaction-session.ts).
 */
export class PostgresPool implements UpstreamProvider, BackendLender {
  readonly #config: PostgresUpstreamConfig
  readonly #idle: PostgresSession[] = []
  #waiters: Waiter[] = []
  /**
   * One timer for every waiter, due at the earliest deadline: under load a client waits
   * milliseconds, and a timer armed and cleared per borrow would cost more than the wait.
   */
  #waiterTimer: NodeJS.Timeout | undefined
  readonly #onEvent: ((event: UpstreamEvent) => void) | undefined
  #size = 0
  #closed = false
  /** Since when the upstream has been unreachable (undefined: it is up). */
  #downSince: number | undefined
  /** What the upstream reported at start-up, for transaction-pooled clients. */
  #parameters: ReadonlyMap<string, string> | undefined

  constructor(config: PostgresUpstreamConfig, onEvent?: (event: UpstreamEvent) => void) {
    this.#config = config
    this.#onEvent = onEvent
  }

  /** Opens `count` sessions ahead of the first clients. */
  async warm(count = Math.min(2, this.#config.poolSize)): Promise<void> {
    const opened = await Promise.allSettled(
      Array.from({ length: Math.max(0, Math.min(count, this.#config.poolSize) - this.#size) }, () =>
        this.#open(),
      ),
    )
    for (const r of opened) if (r.status === 'fulfilled') this.#idle.push(r.value)
  }

  get datasourceName(): string {
    return this.#config.datasourceName
  }

  async acquire(timeoutMs: number): Promise<UpstreamSession> {
    if (this.#config.poolMode !== 'transaction') return this.#take(timeoutMs, true)
    if (!this.#parameters || this.#downSince !== undefined) {
      // The first client learns the server's parameters; while the upstream is down, new
      // clients are refused at once, as in session mode.
      this.giveBack(await this.#take(timeoutMs, false), false)
    }
    return new TransactionSession(this, this.#parameters ?? new Map(), timeoutMs)
  }

  /** A backend for one transaction of a transaction-pooled client. */
  borrow(timeoutMs: number): Promise<PostgresSession> {
    // Every backend busy (the common case under load): the wait itself, with no async step
    // around it.
    if (!this.#closed && this.#idle.length === 0 && this.#size >= this.#config.poolSize) {
      return this.#wait(timeoutMs, false)
    }
    return this.#take(timeoutMs, false)
  }

  /**
   * Takes a backend back from a transaction-pooled client. An idle one goes to the next client
   * as it is (its statements and settings are tracked); `reset` cleans it first (the client
   * left in a transaction, or pinned it).
   */
  giveBack(session: PostgresSession, reset: boolean): void {
    if (reset || this.#closed || !session.alive || session.transactionStatus !== 'I') {
      void this.#return(session)
      return
    }
    session.idleSince = Date.now()
    const waiter = this.#waiters.shift()
    if (waiter) waiter.resolve(session)
    else this.#idle.push(session)
  }

  /**
   * An idle backend that was given back moments ago, without waiting (transaction pooling's
   * common case: no promise per transaction); undefined when a borrow has to wait or check one.
   */
  lendIdle(): PostgresSession | undefined {
    if (this.#closed || this.#waiters.length > 0) return undefined
    const idle = this.#idle.at(-1)
    if (!idle?.alive || !idle.quiet || Date.now() - idle.idleSince >= RECHECK_AFTER_MS) {
      return undefined
    }
    return this.#idle.pop()
  }

  /** An idle session (checked), a new one, or the next one given back. */
  async #take(timeoutMs: number, verify: boolean): Promise<PostgresSession> {
    if (this.#closed)
      throw WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost')
    for (;;) {
      const idle = this.#idle.pop()
      if (!idle) break
      // Transaction pooling checks a session after a pause, not before every transaction.
      const recent = !verify && Date.now() - idle.idleSince < RECHECK_AFTER_MS
      if (idle.alive && idle.quiet && (recent || (await idle.verify()))) return idle
      idle.destroy()
      this.#size--
    }
    if (this.#size < this.#config.poolSize) return this.#open()
    return this.#wait(timeoutMs, verify)
  }

  /** Waits for the next backend given back, or fails at the deadline. */
  #wait(timeoutMs: number, verify: boolean): Promise<PostgresSession> {
    return new Promise<PostgresSession>((resolve, reject) => {
      this.#waiters.push({ resolve, reject, deadline: Date.now() + timeoutMs, timeoutMs, verify })
      this.#armWaiterTimer()
    })
  }

  /** Arms the waiters' timer for the earliest deadline, unless it is armed. */
  #armWaiterTimer(): void {
    if (this.#waiterTimer || this.#waiters.length === 0) return
    let next = Number.POSITIVE_INFINITY
    for (const w of this.#waiters) next = Math.min(next, w.deadline)
    this.#waiterTimer = setTimeout(
      () => {
        this.#waiterTimer = undefined
        this.#expireWaiters()
      },
      Math.max(0, next - Date.now()),
    )
    // Armed past the last wait it served; a waiting client's own socket keeps the process up.
    this.#waiterTimer.unref()
  }

  /** Fails the waiters whose deadline has passed, in their order, and re-arms for the rest. */
  #expireWaiters(): void {
    const now = Date.now()
    const expired = this.#waiters.filter((w) => w.deadline <= now)
    if (expired.length > 0) this.#waiters = this.#waiters.filter((w) => w.deadline > now)
    const name = this.#config.datasourceName
    for (const w of expired) {
      w.reject(
        WireError.fatal(
          WireSqlState.TooManyConnections,
          w.verify
            ? `too many connections for datasource "${name}"`
            : `no upstream session of datasource "${name}" became free within ${w.timeoutMs / 1000} s`,
        ),
      )
    }
    this.#armWaiterTimer()
  }

  async #open(): Promise<PostgresSession> {
    this.#size++
    try {
      const backend = await connectPostgres(this.#config)
      this.#parameters ??= backend.parameters
      this.#up()
      return new PostgresSession(backend, this.#config, (s) => void this.#return(s))
    } catch (error) {
      this.#size--
      if (!(error instanceof UnsafeUpstreamError)) {
        this.#down(error)
        this.#onEvent?.({
          event: 'upstream_connect_failed',
          datasource: this.#config.datasourceName,
          error: errorCode(error),
          pool: this.#state(),
        })
      }
      const message =
        error instanceof UnsafeUpstreamError ? error.message : 'upstream connection lost'
      throw WireError.fatal(WireSqlState.ConnectionFailure, message)
    }
  }

  async #return(session: PostgresSession): Promise<void> {
    if (session.lost && !this.#closed) this.#down(new Error('connection lost'))
    const clean = !this.#closed && (await session.clean())
    if (!clean) {
      session.destroy()
      this.#size--
      // A slot freed up: a waiting client may open a fresh session.
      const waiter = this.#waiters.shift()
      if (waiter && !this.#closed) this.#open().then(waiter.resolve, waiter.reject)
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter) waiter.resolve(session)
    else this.#idle.push(session)
  }

  /** Logs the first failure of an outage, once. */
  #down(error: unknown): void {
    if (this.#downSince !== undefined) return
    this.#downSince = Date.now()
    this.#onEvent?.({
      event: 'upstream_unreachable',
      datasource: this.#config.datasourceName,
      error: errorCode(error),
      pool: this.#state(),
    })
  }

  /** Logs the end of an outage. */
  #up(): void {
    if (this.#downSince === undefined) return
    const downMs = Date.now() - this.#downSince
    this.#downSince = undefined
    this.#onEvent?.({
      event: 'upstream_recovered',
      datasource: this.#config.datasourceName,
      downMs,
      pool: this.#state(),
    })
  }

  #state(): UpstreamEvent['pool'] {
    return { size: this.#size, idle: this.#idle.length, waiting: this.#waiters.length }
  }

  reachable(): boolean {
    return this.#downSince === undefined
  }

  poolState(): UpstreamPoolState {
    return { datasource: this.#config.datasourceName, ...this.#state() }
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#waiterTimer)
    this.#waiterTimer = undefined
    for (const w of this.#waiters.splice(0)) {
      w.reject(WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost'))
    }
    for (const s of this.#idle.splice(0)) s.destroy()
  }
}

/** What failed, for the log and the metrics: a system error code, else the message. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : error instanceof Error ? error.message : 'unknown'
}
