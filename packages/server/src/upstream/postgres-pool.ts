import { WireError, WireSqlState } from '../pgwire/wire-error.js'
import { connectPostgres } from './postgres-connect.js'
import { PostgresSession } from './postgres-upstream.js'
import { UnsafeUpstreamError } from './unsafe-casts.js'
import type {
  PostgresUpstreamConfig,
  UpstreamEvent,
  UpstreamProvider,
  UpstreamSession,
} from './upstream.types.js'

interface Waiter {
  resolve: (session: PostgresSession) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

/**
 * A warm per-datasource pool of upstream sessions (session pooling: one upstream session is
 * bound to one client connection for the client's lifetime). Up to `poolSize` sessions exist;
 * a client that finds none free waits, and gets FATAL 53300 after `timeoutMs`.
 */
export class PostgresPool implements UpstreamProvider {
  readonly #config: PostgresUpstreamConfig
  readonly #idle: PostgresSession[] = []
  readonly #waiters: Waiter[] = []
  readonly #onEvent: ((event: UpstreamEvent) => void) | undefined
  #size = 0
  #closed = false
  /** Since when the upstream has been unreachable (undefined: it is up). */
  #downSince: number | undefined

  constructor(config: PostgresUpstreamConfig, onEvent?: (event: UpstreamEvent) => void) {
    this.#config = config
    this.#onEvent = onEvent
  }

  /** Opens `count` sessions ahead of the first clients. */
  async warm(count = Math.min(2, this.#config.poolSize)): Promise<void> {
    const opened = await Promise.allSettled(
      Array.from({ length: Math.max(0, count - this.#size) }, () => this.#open()),
    )
    for (const r of opened) if (r.status === 'fulfilled') this.#idle.push(r.value)
  }

  async acquire(timeoutMs: number): Promise<UpstreamSession> {
    if (this.#closed)
      throw WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost')
    for (;;) {
      const idle = this.#idle.pop()
      if (!idle) break
      if (idle.alive && (await idle.verify())) return idle
      idle.destroy()
      this.#size--
    }
    if (this.#size < this.#config.poolSize) return this.#open()
    return new Promise<PostgresSession>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
          reject(
            WireError.fatal(
              WireSqlState.TooManyConnections,
              `too many connections for datasource "${this.#config.datasourceName}"`,
            ),
          )
        }, timeoutMs),
      }
      this.#waiters.push(waiter)
    })
  }

  async #open(): Promise<PostgresSession> {
    this.#size++
    try {
      const backend = await connectPostgres(this.#config)
      this.#up()
      return new PostgresSession(backend, this.#config, (s) => void this.#return(s))
    } catch (error) {
      this.#size--
      if (!(error instanceof UnsafeUpstreamError)) this.#down(error)
      const message =
        error instanceof UnsafeUpstreamError ? error.message : 'upstream connection lost'
      throw WireError.fatal(WireSqlState.ConnectionFailure, message)
    }
  }

  async #return(session: PostgresSession): Promise<void> {
    if (!session.alive && !this.#closed) this.#down(new Error('connection lost'))
    const clean = !this.#closed && (await session.clean())
    if (!clean) {
      session.destroy()
      this.#size--
      // A slot freed up: a waiting client may open a fresh session.
      const waiter = this.#waiters.shift()
      if (waiter && !this.#closed) {
        clearTimeout(waiter.timer)
        this.#open().then(waiter.resolve, waiter.reject)
      }
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter) {
      clearTimeout(waiter.timer)
      waiter.resolve(session)
    } else this.#idle.push(session)
  }

  /** Logs the first failure of an outage, once. */
  #down(error: unknown): void {
    if (this.#downSince !== undefined) return
    this.#downSince = Date.now()
    const code = (error as { code?: unknown }).code
    this.#onEvent?.({
      event: 'upstream_unreachable',
      datasource: this.#config.datasourceName,
      error: typeof code === 'string' ? code : error instanceof Error ? error.message : 'unknown',
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

  async close(): Promise<void> {
    this.#closed = true
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer)
      w.reject(WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost'))
    }
    for (const s of this.#idle.splice(0)) s.destroy()
  }
}
