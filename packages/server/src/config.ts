import { readFileSync } from 'node:fs'
import { DEFAULT_STATEMENT_LIMITS } from '@palisade/core'

/** Settings of the data plane listener. */
export interface DataPlaneConfig {
  /** Bind address (default `127.0.0.1`). */
  host: string
  /** Port (default 5434; 0 picks a free one). */
  port: number
  /** PEM certificate and key; when set, SSLRequest is answered `S` and TLS follows. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined
  /** Reject plaintext startups with FATAL 28000 (needs `tls`). */
  requireTls: boolean
  /** How long a client waits for a free upstream session (default 30 s), then FATAL 53300. */
  acquireTimeoutMs: number
  /** Pool mode of PostgreSQL datasources that set none (default `session`; docs/pgwire.md). */
  poolMode: 'session' | 'transaction'
  /** Opening an upstream session may take this long (default 10 s), then FATAL 08006. */
  upstreamConnectTimeoutMs: number
  /** Authenticated sessions allowed at once (default 1000); more get FATAL 53300. */
  maxConnections: number
  /** Start-up, TLS and authentication must finish within this long (default 10 s; 0: none). */
  loginTimeoutMs: number
  /** Connections still authenticating, in all (default 1000); past it the oldest is dropped. */
  maxPendingConnections: number
  /** The same per source address (default 200). */
  maxPendingPerAddress: number
  /** Connections with no message for this long are closed (default 15 min; 0 disables). */
  idleTimeoutMs: number
  /** Largest client message (default 64 MiB); a longer one ends the connection with 54000. */
  maxMessageBytes: number
  /** On shutdown, how long statements in progress may finish (default 10 s). */
  shutdownGraceMs: number
  /** Longest statement, in UTF-8 bytes (default 1 MiB); longer ones are refused with 54000. */
  maxStatementBytes: number
  /** Wall-clock budget of one long statement's rewrite (default 5 s); past it, 54001. */
  rewriteTimeoutMs: number
  /** Threads that rewrite long statements (default: cores - 1, at least 1). */
  rewriteWorkers: number
  /**
   * Send the numbers of simple-protocol SELECTs as parameters of one upstream prepared statement
   * per shape (default true; docs/rewrite.md#literal-parameters). False keeps every literal in
   * the text, planned for its value each time.
   */
  literalParameters: boolean
  /**
   * Accept identity providers' tokens as passwords (default false; docs/sso.md). Where on, and
   * an identity provider is active, a client over TLS or loopback is asked for its password in
   * clear (inside TLS) instead of SCRAM, so it can send a token; password users keep working.
   */
  tokenLogins: boolean
  /** Also ask for tokens on plaintext connections from other hosts (default false: unsafe). */
  tokenLoginsWithoutTls: boolean
  /** Tolerated clock difference with the identity providers, in seconds (default 30). */
  tokenClockSkewSeconds: number
  /** A token-login session ends at its first statement this long after `exp` (default 30 s). */
  tokenSessionGraceSeconds: number
}

/** The defaults of docs/pgwire.md#connecting. */
export const DEFAULT_DATA_PLANE_CONFIG: DataPlaneConfig = {
  host: '127.0.0.1',
  port: 5434,
  requireTls: false,
  acquireTimeoutMs: 30_000,
  poolMode: 'session',
  upstreamConnectTimeoutMs: 10_000,
  maxConnections: 1000,
  loginTimeoutMs: 10_000,
  maxPendingConnections: 1000,
  maxPendingPerAddress: 200,
  idleTimeoutMs: 15 * 60_000,
  maxMessageBytes: 64 * 1024 * 1024,
  shutdownGraceMs: 10_000,
  maxStatementBytes: DEFAULT_STATEMENT_LIMITS.maxStatementBytes,
  rewriteTimeoutMs: DEFAULT_STATEMENT_LIMITS.rewriteTimeoutMs,
  rewriteWorkers: DEFAULT_STATEMENT_LIMITS.workers,
  literalParameters: true,
  tokenLogins: false,
  tokenLoginsWithoutTls: false,
  tokenClockSkewSeconds: 30,
  tokenSessionGraceSeconds: 30,
}

/**
 * Reads the data plane settings from the environment: `PALISADE_PG_HOST`, `PALISADE_PG_PORT`,
 * `PALISADE_TLS_CERT` and `PALISADE_TLS_KEY` (file paths), `PALISADE_TLS_REQUIRED` (`true`),
 * `PALISADE_TOKEN_LOGINS` and `PALISADE_TOKEN_LOGINS_WITHOUT_TLS` (`true`; docs/sso.md).
 */
export function dataPlaneConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DataPlaneConfig {
  const certPath = env['PALISADE_TLS_CERT']
  const keyPath = env['PALISADE_TLS_KEY']
  const port = Number(env['PALISADE_PG_PORT'] ?? DEFAULT_DATA_PLANE_CONFIG.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error('PALISADE_PG_PORT must be a port number')
  }
  return {
    ...DEFAULT_DATA_PLANE_CONFIG,
    host: env['PALISADE_PG_HOST'] ?? DEFAULT_DATA_PLANE_CONFIG.host,
    port,
    tls:
      certPath && keyPath
        ? { cert: readFileSync(certPath), key: readFileSync(keyPath) }
        : undefined,
    requireTls: env['PALISADE_TLS_REQUIRED'] === 'true',
    tokenLogins: env['PALISADE_TOKEN_LOGINS'] === 'true',
    tokenLoginsWithoutTls: env['PALISADE_TOKEN_LOGINS_WITHOUT_TLS'] === 'true',
  }
}
