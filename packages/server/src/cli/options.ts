import { readFileSync } from 'node:fs'
import type { ServerConfig, TlsFiles } from '../create-server.js'
import { createLogger, isLogLevel, type LogLevel } from '../logging/logger.js'

/** The `serve` / `migrate` flags (node:util parseArgs), each with its environment variable. */
export const SERVE_FLAGS = {
  'pg-host': {
    type: 'string',
    env: 'PALISADE_PG_HOST',
    help: 'data plane bind address (127.0.0.1)',
  },
  'pg-port': { type: 'string', env: 'PALISADE_PG_PORT', help: 'data plane port (5434)' },
  'admin-host': {
    type: 'string',
    env: 'PALISADE_ADMIN_HOST',
    help: 'admin API bind address (127.0.0.1)',
  },
  'admin-port': { type: 'string', env: 'PALISADE_ADMIN_PORT', help: 'admin API port (5435)' },
  'data-dir': {
    type: 'string',
    env: 'PALISADE_DATA_DIR',
    help: 'store and secrets directory (./palisade-data)',
  },
  'database-url': {
    type: 'string',
    env: 'DATABASE_URL',
    help: 'PostgreSQL store instead of PGlite',
  },
  'tls-cert': {
    type: 'string',
    env: 'PALISADE_TLS_CERT',
    help: 'PEM certificate file (both planes)',
  },
  'tls-key': {
    type: 'string',
    env: 'PALISADE_TLS_KEY',
    help: 'PEM private key file (both planes)',
  },
  'tls-required': {
    type: 'boolean',
    env: 'PALISADE_TLS_REQUIRED',
    help: 'refuse plaintext data-plane clients',
  },
  'token-logins': {
    type: 'boolean',
    env: 'PALISADE_TOKEN_LOGINS',
    help: "accept identity providers' tokens as data-plane passwords, over TLS or loopback (docs/sso.md)",
  },
  'token-logins-without-tls': {
    type: 'boolean',
    env: 'PALISADE_TOKEN_LOGINS_WITHOUT_TLS',
    help: 'also accept tokens on plaintext connections from other hosts (unsafe)',
  },
  'token-session-grace': {
    type: 'string',
    env: 'PALISADE_TOKEN_SESSION_GRACE_SECONDS',
    help: "seconds a token-login session may outlive its token's exp (30)",
  },
  'token-clock-skew': {
    type: 'string',
    env: 'PALISADE_TOKEN_CLOCK_SKEW_SECONDS',
    help: "seconds of clock difference tolerated on identity providers' tokens (30)",
  },
  'console-url': {
    type: 'string',
    env: 'PALISADE_CONSOLE_URL',
    help: "the console's public address, the identity providers' redirect URI (default: the request's origin + /ui)",
  },
  'max-connections': {
    type: 'string',
    env: 'PALISADE_MAX_CONNECTIONS',
    help: 'authenticated data plane sessions at once (1000)',
  },
  'login-timeout': {
    type: 'string',
    env: 'PALISADE_LOGIN_TIMEOUT_SECONDS',
    help: 'seconds a data plane client has for start-up, TLS and authentication (10; 0 = no limit)',
  },
  'max-pending-connections': {
    type: 'string',
    env: 'PALISADE_MAX_PENDING_CONNECTIONS',
    help: 'data plane connections still authenticating, in all (1000); past it the oldest is dropped',
  },
  'max-pending-per-address': {
    type: 'string',
    env: 'PALISADE_MAX_PENDING_PER_ADDRESS',
    help: 'the same per client address (200)',
  },
  'login-throttle-window': {
    type: 'string',
    env: 'PALISADE_LOGIN_THROTTLE_WINDOW_SECONDS',
    help: 'seconds a failed login counts against its address and account name (900)',
  },
  'login-throttle-address-failures': {
    type: 'string',
    env: 'PALISADE_LOGIN_THROTTLE_ADDRESS_FAILURES',
    help: 'failed logins from one address in the window before it is slowed down (20; 0 = off)',
  },
  'login-throttle-account-failures': {
    type: 'string',
    env: 'PALISADE_LOGIN_THROTTLE_ACCOUNT_FAILURES',
    help: 'failed logins on one account name, from addresses it never logged in from, before it is slowed down (10; 0 = off)',
  },
  'login-throttle-max-delay': {
    type: 'string',
    env: 'PALISADE_LOGIN_THROTTLE_MAX_DELAY_SECONDS',
    help: 'longest delay of a throttled login; delays double from 1 s (60)',
  },
  'pool-mode': {
    type: 'string',
    env: 'PALISADE_POOL_MODE',
    help: 'session|transaction: how clients share upstream sessions where a datasource sets no pool_mode (session)',
  },
  'literal-parameters': {
    type: 'string',
    env: 'PALISADE_LITERAL_PARAMETERS',
    help: 'on|off: send the numbers of simple-protocol SELECTs upstream as parameters of one prepared statement per shape (on)',
  },
  'pool-wait-timeout': {
    type: 'string',
    env: 'PALISADE_POOL_WAIT_TIMEOUT_SECONDS',
    help: 'seconds a client waits for a free upstream session before FATAL 53300 (30)',
  },
  'upstream-connect-timeout': {
    type: 'string',
    env: 'PALISADE_UPSTREAM_CONNECT_TIMEOUT_SECONDS',
    help: 'seconds opening an upstream session may take before FATAL 08006 (10)',
  },
  'idle-timeout': {
    type: 'string',
    env: 'PALISADE_IDLE_TIMEOUT_SECONDS',
    help: 'close idle data plane connections after this many seconds (900; 0 = never)',
  },
  'max-message-bytes': {
    type: 'string',
    env: 'PALISADE_MAX_MESSAGE_BYTES',
    help: 'largest client message in bytes (67108864)',
  },
  'max-statement-bytes': {
    type: 'string',
    env: 'PALISADE_MAX_STATEMENT_BYTES',
    help: 'longest SQL statement in bytes (1048576; longer: 54000)',
  },
  'rewrite-timeout-ms': {
    type: 'string',
    env: 'PALISADE_REWRITE_TIMEOUT_MS',
    help: "one long statement's rewrite budget in ms (5000; past it: 54001)",
  },
  'rewrite-workers': {
    type: 'string',
    env: 'PALISADE_REWRITE_WORKERS',
    help: 'threads that rewrite long statements (cores - 1, at least 1)',
  },
  'audit-retention': {
    type: 'string',
    env: 'PALISADE_AUDIT_RETENTION_DAYS',
    help: 'days the query audit keeps its entries (default: for ever; docs/audit.md#retention)',
  },
  'log-level': {
    type: 'string',
    env: 'PALISADE_LOG_LEVEL',
    help: 'fatal|error|warn|info|debug|trace|silent (info)',
  },
  'cors-origins': {
    type: 'string',
    env: 'PALISADE_ADMIN_CORS_ORIGINS',
    help: 'comma-separated admin CORS origins',
  },
} as const

/** The parsed flag values of {@link SERVE_FLAGS}. */
export type ServeFlags = { [K in keyof typeof SERVE_FLAGS]?: string | boolean | undefined }

/** A flag's value, else its environment variable's. */
function pick(flags: ServeFlags, env: NodeJS.ProcessEnv, name: keyof typeof SERVE_FLAGS) {
  const flag = flags[name]
  if (flag !== undefined) return flag === true ? 'true' : flag === false ? undefined : flag
  const value = env[SERVE_FLAGS[name].env]
  return value === '' ? undefined : value
}

function count(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be an integer of at least ${min}`)
  return n
}

function consoleUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const url = URL.canParse(value) ? new URL(value) : null
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash) {
    throw new Error('--console-url must be an http(s) URL without query or fragment')
  }
  return url.href.replace(/\/$/, '')
}

function port(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be a port number`)
  return n
}

function onOff(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined
  if (value === 'on' || value === 'off') return value === 'on'
  throw new Error(`${name} must be on or off`)
}

function poolMode(value: string | undefined): 'session' | 'transaction' | undefined {
  if (value === undefined || value === 'session' || value === 'transaction') return value
  throw new Error('--pool-mode must be session or transaction')
}

const secondsToMs = (seconds: number | undefined) =>
  seconds === undefined ? undefined : seconds * 1000

/** The store location of `serve` and `migrate`: `--database-url`, else the data directory. */
export function storeLocation(flags: ServeFlags, env: NodeJS.ProcessEnv = process.env) {
  return {
    dataDir: pick(flags, env, 'data-dir') ?? './palisade-data',
    databaseUrl: pick(flags, env, 'database-url'),
  }
}

/** The log level of the flags and env (default `info`). */
export function logLevel(flags: ServeFlags, env: NodeJS.ProcessEnv = process.env): LogLevel {
  const level = pick(flags, env, 'log-level') ?? 'info'
  if (!isLogLevel(level)) throw new Error(`unknown log level "${level}"`)
  return level
}

/** Builds `createServer`'s config from flags, falling back to the environment per flag. */
export function serverConfigFromArgs(
  flags: ServeFlags,
  env: NodeJS.ProcessEnv = process.env,
): ServerConfig {
  const certPath = pick(flags, env, 'tls-cert')
  const keyPath = pick(flags, env, 'tls-key')
  if (Boolean(certPath) !== Boolean(keyPath)) throw new Error('TLS needs both a cert and a key')
  const tls: TlsFiles | undefined =
    certPath && keyPath ? { cert: readFileSync(certPath), key: readFileSync(keyPath) } : undefined
  const ttl = env['PALISADE_ADMIN_TOKEN_TTL_SECONDS']
  const origins = pick(flags, env, 'cors-origins')
  const username = env['PALISADE_ADMIN_USERNAME']
  const password = env['PALISADE_ADMIN_PASSWORD']
  return {
    ...storeLocation(flags, env),
    auditRetentionDays: count(pick(flags, env, 'audit-retention'), '--audit-retention', 1),
    jwtSecret: env['PALISADE_ADMIN_JWT_SECRET'] || undefined,
    initialAdmin: username && password ? { username, password } : undefined,
    dataPlane: {
      host: pick(flags, env, 'pg-host'),
      port: port(pick(flags, env, 'pg-port'), 'the data plane port'),
      tls,
      requireTls: pick(flags, env, 'tls-required') === 'true',
      tokenLogins: pick(flags, env, 'token-logins') === 'true',
      tokenLoginsWithoutTls: pick(flags, env, 'token-logins-without-tls') === 'true',
      tokenSessionGraceSeconds: count(
        pick(flags, env, 'token-session-grace'),
        '--token-session-grace',
        0,
      ),
      tokenClockSkewSeconds: count(pick(flags, env, 'token-clock-skew'), '--token-clock-skew', 0),
      maxConnections: count(pick(flags, env, 'max-connections'), '--max-connections', 1),
      idleTimeoutMs: secondsToMs(count(pick(flags, env, 'idle-timeout'), '--idle-timeout', 0)),
      poolMode: poolMode(pick(flags, env, 'pool-mode')),
      upstreamConnectTimeoutMs: secondsToMs(
        count(pick(flags, env, 'upstream-connect-timeout'), '--upstream-connect-timeout', 1),
      ),
      acquireTimeoutMs: secondsToMs(
        count(pick(flags, env, 'pool-wait-timeout'), '--pool-wait-timeout', 1),
      ),
      loginTimeoutMs: secondsToMs(count(pick(flags, env, 'login-timeout'), '--login-timeout', 0)),
      maxPendingConnections: count(
        pick(flags, env, 'max-pending-connections'),
        '--max-pending-connections',
        1,
      ),
      maxPendingPerAddress: count(
        pick(flags, env, 'max-pending-per-address'),
        '--max-pending-per-address',
        1,
      ),
      maxMessageBytes: count(pick(flags, env, 'max-message-bytes'), '--max-message-bytes', 1024),
      maxStatementBytes: count(
        pick(flags, env, 'max-statement-bytes'),
        '--max-statement-bytes',
        1024,
      ),
      rewriteTimeoutMs: count(pick(flags, env, 'rewrite-timeout-ms'), '--rewrite-timeout-ms', 1),
      rewriteWorkers: count(pick(flags, env, 'rewrite-workers'), '--rewrite-workers', 1),
      literalParameters: onOff(pick(flags, env, 'literal-parameters'), '--literal-parameters'),
    },
    loginThrottle: {
      windowMs: secondsToMs(
        count(pick(flags, env, 'login-throttle-window'), '--login-throttle-window', 1),
      ),
      addressFailures: count(
        pick(flags, env, 'login-throttle-address-failures'),
        '--login-throttle-address-failures',
        0,
      ),
      accountFailures: count(
        pick(flags, env, 'login-throttle-account-failures'),
        '--login-throttle-account-failures',
        0,
      ),
      maxDelayMs: secondsToMs(
        count(pick(flags, env, 'login-throttle-max-delay'), '--login-throttle-max-delay', 1),
      ),
    },
    admin: {
      host: pick(flags, env, 'admin-host'),
      port: port(pick(flags, env, 'admin-port'), 'the admin port'),
      tls,
      corsOrigins: origins
        ?.split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      tokenTtlSeconds: ttl ? Number(ttl) : undefined,
      metricsToken: env['PALISADE_METRICS_TOKEN'] || undefined,
      consoleUrl: consoleUrl(pick(flags, env, 'console-url')),
    },
    logger: createLogger({ level: logLevel(flags, env) }),
    handleSignals: true,
  }
}
