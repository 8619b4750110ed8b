import type { SslMode } from '@palisade/store'

/** One complete backend message as received: code byte, int32 length, body. */
export interface BackendFrame {
  readonly code: number
  readonly bytes: Uint8Array
}

/**
 * One upstream backend session bound to one client connection. Frontend messages go in as
 * complete frames; backend messages come out as frames, relayed without decoding rows.
 */
export interface UpstreamSession {
  /** Server parameters the upstream reported (server_version, DateStyle, TimeZone, ...). */
  readonly parameters: ReadonlyMap<string, string>
  /** False once the connection is gone; the client then gets FATAL 08006. */
  readonly alive: boolean
  /** Queues frontend messages (complete frames) for the upstream; `read` sends what is queued. */
  send(frames: Uint8Array): void
  /**
   * Sends the queued messages, then resolves with the next backend frames; rejects when the
   * upstream connection is lost.
   */
  read(): Promise<BackendFrame[]>
  /** Asks the upstream to cancel the statement in progress (CancelRequest). */
  cancel(): Promise<void>
  /**
   * True when upstream statements are shared by every client of the pool (transaction pooling):
   * they are then named after their content, so equal statements are prepared once per backend.
   */
  readonly sharedStatements?: boolean
  /** The upstream refused, or skipped, the Parse of statement `name`: it does not exist. */
  forgetStatement?(name: string): void
  /** Keeps this client on its current upstream session until it disconnects (WITH HOLD cursor). */
  pin?(): void
  /**
   * Transaction pooling: takes an upstream session for the next statement before it is
   * rewritten, so a client that waits for one holds only its message (undefined: taken at once).
   */
  reserve?(): Promise<unknown> | undefined
  /** Transaction pooling: gives back a session taken by `reserve` that no transaction used. */
  releaseIdle?(): void
  /**
   * Returns the session to its pool, cleaned (rolled back, cursors and statements dropped,
   * presentation settings reset). `abandoned`: the client left in the middle of a statement,
   * which is cancelled at once (CancelRequest); a backend that does not come back idle soon
   * after is closed and terminated instead (PostgreSQL; PGlite cannot interrupt a statement).
   */
  release(options?: { abandoned?: boolean }): Promise<void>
}

/** Hands out upstream sessions for one datasource. */
export interface UpstreamProvider {
  /**
   * An upstream session; rejects with FATAL 53300 when none becomes free within `timeoutMs`
   * and with FATAL 08006 when the upstream cannot be reached.
   */
  acquire(timeoutMs: number): Promise<UpstreamSession>
  /** Closes every session (idle ones at once, bound ones when released). */
  close(): Promise<void>
  /** A pool's state now, for metrics; absent for an embedded upstream. */
  poolState?(): UpstreamPoolState
  /**
   * Whether the upstream answered the pool's last connection attempt (readiness); absent for an
   * embedded upstream, which is always there.
   */
  reachable?(): boolean
}

/** What the data plane last saw of one datasource's upstream (`/ready`, `/metrics`). */
export interface UpstreamStatus {
  /** The datasource's name (nothing of its connection settings). */
  readonly datasource: string
  /**
   * `reachable`: its last connection attempt worked, or it is embedded. `unreachable`: the last
   * attempt failed, or its pool could not start. Datasources no client has used since start are
   * not listed: nothing was tried yet.
   */
  readonly state: 'reachable' | 'unreachable'
}

/** One datasource's upstream pool: sessions open, idle, and clients waiting for one. */
export interface UpstreamPoolState {
  readonly datasource: string
  readonly size: number
  readonly idle: number
  readonly waiting: number
}

/** How to reach a PostgreSQL upstream. */
export interface PostgresUpstreamConfig {
  kind: 'postgres'
  datasourceName: string
  host: string
  port: number
  database: string
  user: string
  password?: string | null | undefined
  /** TLS as libpq reads `sslmode` (docs/admin-api.md); absent means `prefer`. */
  sslmode?: SslMode | undefined
  sslrootcert?: string | null | undefined
  statementTimeoutMs: number
  poolSize: number
  /** Opening one upstream session (TCP, TLS, authentication) may take this long (default 10 s). */
  connectTimeoutMs?: number | undefined
  /**
   * `session`: a client holds one upstream session for its whole connection. `transaction`: only
   * for one transaction (docs/pgwire.md); the datasource's value, else the server's default.
   */
  poolMode?: 'session' | 'transaction' | undefined
}

/** An embedded PGlite upstream (demo and tests). */
export interface PgliteUpstreamConfig {
  kind: 'pglite'
  datasourceName: string
  dataDir?: string | null | undefined
  initSql?: string | null | undefined
  statementTimeoutMs: number
}

/** The upstream of one datasource. */
export type UpstreamConfig = PostgresUpstreamConfig | PgliteUpstreamConfig

/** The upstream of a datasource went away or came back (operator log). */
export interface UpstreamEvent {
  /** Outage start and end (once each per outage), and every failed connection attempt. */
  readonly event: 'upstream_unreachable' | 'upstream_recovered' | 'upstream_connect_failed'
  readonly datasource: string
  /** What failed: an error code such as `ECONNREFUSED`, or the error's class. */
  readonly error?: string
  /** How long it was unreachable (recovered only). */
  readonly downMs?: number
  /** The pool then: sessions open, idle, clients waiting. */
  readonly pool: { readonly size: number; readonly idle: number; readonly waiting: number }
}
