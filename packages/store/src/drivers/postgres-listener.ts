import pg from 'pg'

/** What a listener reports; each callback runs synchronously on the connection's events. */
export interface ListenHandlers {
  onMessage(payload: string): void
  /** LISTEN is back after a lost connection: notifications may have been missed meanwhile. */
  onResumed(): void
  /** The connection was lost; reconnection attempts follow. */
  onLost(error: Error | undefined): void
}

/** Where and how to listen. */
export interface ListenOptions extends ListenHandlers {
  channel: string
  /**
   * Shown in `pg_stat_activity`. Set only once LISTEN is in effect, so whoever lists listeners by
   * it lists connections that receive every notification committed from then on.
   */
  applicationName: string
}

/** Pause between reconnection attempts. */
const RETRY_MS = 500
/** A heartbeat on an idle connection detects a peer that vanished without closing it. */
const HEARTBEAT_MS = 10_000
/** Connects, LISTEN, heartbeats and NOTIFYs that take longer count as a lost connection. */
const TIMEOUT_MS = 5_000

/**
 * One dedicated connection that LISTENs on a channel and reconnects when it is lost. It is also
 * where this instance sends its own small NOTIFYs, so they go out in order and only while it
 * can hear the answers.
 */
export class PostgresListener {
  readonly #url: string
  readonly #options: ListenOptions
  #client: pg.Client | undefined
  /** A connection whose LISTEN may already be in effect while it finishes setting up. */
  #connecting: pg.Client | undefined
  #closed = false
  #retry: NodeJS.Timeout | undefined
  #heartbeat: NodeJS.Timeout | undefined

  constructor(url: string, options: ListenOptions) {
    this.#url = url
    this.#options = options
  }

  /** Connects and subscribes; throws when the first attempt fails. */
  async start(): Promise<void> {
    await this.#connect()
  }

  /** Whether the connection is up and subscribed. */
  get listening(): boolean {
    return this.#client !== undefined
  }

  /** Sends `pg_notify(channel, payload)` on the listener connection; dropped while it is down. */
  notify(payload: string): void {
    // A notification can arrive before the connection is fully set up; its answer goes out too.
    const client = this.#client ?? this.#connecting
    if (!client) return
    client
      .query('SELECT pg_notify($1, $2)', [this.#options.channel, payload])
      .catch((error: Error) => this.#lost(client, error))
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    clearInterval(this.#heartbeat)
    const client = this.#client
    this.#client = undefined
    if (client) await client.end().catch(() => {})
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#url,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: TIMEOUT_MS,
      keepAlive: true,
    })
    // Registered before connecting: an unhandled 'error' event would crash the process.
    client.on('error', (error) => this.#lost(client, error))
    client.on('end', () => this.#lost(client, undefined))
    client.on('notification', (msg) => {
      if (msg.channel === this.#options.channel && msg.payload !== undefined) {
        this.#options.onMessage(msg.payload)
      }
    })
    this.#connecting = client
    try {
      await client.connect()
      await client.query(`LISTEN ${pg.escapeIdentifier(this.#options.channel)}`)
      // This connection only sends NOTIFYs, which need no durable commit: skip the WAL flush.
      await client.query(
        "SELECT set_config('synchronous_commit', 'off', false), set_config('application_name', $1, false)",
        [this.#options.applicationName],
      )
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    } finally {
      this.#connecting = undefined
    }
    if (this.#closed) {
      await client.end().catch(() => {})
      return
    }
    this.#client = client
    clearInterval(this.#heartbeat)
    this.#heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.#lost(client, error))
    }, HEARTBEAT_MS)
    this.#heartbeat.unref()
  }

  #lost(client: pg.Client, error: Error | undefined): void {
    if (this.#client !== client) return
    this.#client = undefined
    clearInterval(this.#heartbeat)
    client.end().catch(() => {})
    if (this.#closed) return
    this.#options.onLost(error)
    this.#scheduleRetry()
  }

  #scheduleRetry(): void {
    this.#retry = setTimeout(async () => {
      try {
        await this.#connect()
      } catch {
        if (!this.#closed) this.#scheduleRetry()
        return
      }
      if (this.#client) this.#options.onResumed()
    }, RETRY_MS)
    this.#retry.unref()
  }
}
