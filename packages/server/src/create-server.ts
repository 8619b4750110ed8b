import { readFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer, type ServerType } from '@hono/node-server'
import { createStore, type Store } from '@palisade/store'
import { ensureInitialAdmin, resolveJwtSecret } from './bootstrap/admin-bootstrap.js'
import { closeOnSignals } from './cli/signals.js'
import type { DataPlaneConfig } from './config.js'
import { createDataPlane, type DataPlane } from './create-data-plane.js'
import { createStoreBackend } from './data-plane/store-backend.js'
import { Readiness } from './health/readiness.js'
import { createAdminApp } from './http/index.js'
import { createLogger, type Logger } from './logging/logger.js'
import {
  adminAppLog,
  changeFeedLog,
  connectionLog,
  dataPlaneLog,
  loginGuardLog,
  loginLog,
  upstreamLog,
} from './logging/plane-logs.js'
import { withRequestLog } from './logging/request-log.js'
import { LoginGuard } from './logins/login-guard.js'
import { LoginThrottle, type LoginThrottleConfig } from './logins/login-throttle.js'
import { ServerMetrics } from './metrics/server-metrics.js'
import type { UpstreamFactory } from './upstream/upstream-registry.js'

/** PEM certificate and key. */
export interface TlsFiles {
  cert: string | Buffer
  key: string | Buffer
}

/** Everything `createServer` needs; `serverConfigFromEnv` builds it from flags and env. */
export interface ServerConfig {
  /** Store data directory (PGlite) and home of generated secrets; omitted: in-memory. */
  dataDir?: string | undefined
  /** PostgreSQL store instead of PGlite (`DATABASE_URL`). */
  databaseUrl?: string | undefined
  /** Seals datasource passwords; else `PALISADE_SECRET_KEY` or `<dataDir>/secret.key`. */
  secretKey?: string | undefined
  /** Days the query audit keeps its entries (`--audit-retention`; default: for ever). */
  auditRetentionDays?: number | undefined
  /** Data plane listener (defaults: 127.0.0.1:5434). */
  dataPlane?: Partial<DataPlaneConfig> | undefined
  /** Admin plane listener (defaults: 127.0.0.1:5435; HTTPS when `tls` is set). */
  admin?:
    | {
        host?: string | undefined
        port?: number | undefined
        tls?: TlsFiles | undefined
        corsOrigins?: string[] | undefined
        tokenTtlSeconds?: number | undefined
        /** Bearer token of `GET /metrics` for scrapers (admin tokens work too). */
        metricsToken?: string | undefined
        /** The console's public address, the identity providers' redirect URI (docs/sso.md). */
        consoleUrl?: string | undefined
      }
    | undefined
  /** HS256 key of admin tokens; else `<dataDir>/admin-jwt-secret`, generated on first start. */
  jwtSecret?: string | undefined
  /** Failed-login throttle of both planes (defaults: docs/operations.md, "Failed logins"). */
  loginThrottle?: Partial<LoginThrottleConfig> | undefined
  /** The first admin, created only while the store has no admin. */
  initialAdmin?: { username: string; password: string } | undefined
  /** Operator log (default: pino JSON lines on stdout at `info`). */
  logger?: Logger | undefined
  /** Close cleanly (audit flushed) on SIGINT and SIGTERM, then exit. */
  handleSignals?: boolean | undefined
  /** @internal Upstream providers (tests). */
  upstreamFactory?: UpstreamFactory | undefined
  /** @internal A migrated store's `dumpDataDir()` snapshot the in-memory store starts from (tests). */
  storeSnapshot?: Blob | undefined
}

/** A running Palisade: both planes over one store. */
export interface PalisadeServer {
  readonly store: Store
  readonly dataPlane: DataPlane
  readonly admin: { readonly host: string; readonly port: number; readonly url: string }
  readonly logger: Logger
  /** Stops both listeners, flushes the query audit and closes the store; safe to call twice. */
  close(): Promise<void>
}

/** The package version, reported by `/health` and `/ready`. */
export const VERSION = readVersion()

/**
 * Starts Palisade: opens (and migrates) the store, creates the first admin if configured, then
 * starts the data plane and the admin API.
 *
 * ```ts
 * const server = await createServer({ dataDir: './palisade-data' })
 * // psql "postgresql://alice@127.0.0.1:5434/shop"; curl http://127.0.0.1:5435/ready
 * await server.close()
 * ```
 */
export async function createServer(config: ServerConfig = {}): Promise<PalisadeServer> {
  const logger = config.logger ?? createLogger()
  const metrics = new ServerMetrics()
  const store = await createStore({
    ...(config.dataDir ? { dataDir: config.dataDir } : {}),
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    ...(config.secretKey ? { secretKey: config.secretKey } : {}),
    ...(config.storeSnapshot ? { loadDataDir: config.storeSnapshot } : {}),
    queryAudit: { onProblem: (message) => logger.warn({ event: 'query_audit' }, message) },
    onChangeFeed: both(changeFeedLog(logger), (e) => {
      if (e.type === 'received') metrics.changeArrived(e.lagMs)
    }),
    onLoginAuditProblem: (message) => logger.warn({ event: 'login_audit' }, message),
    queryAuditRetentionDays: config.auditRetentionDays,
    onQueryAuditRetention: (e) => {
      if (e.type === 'removed') {
        const { checkpoint_id, cutoff, removed_batches, removed_entries, removed_texts } = e.removal
        logger.info(
          {
            event: 'query_audit_retention',
            checkpoint_id,
            cutoff,
            removed_batches,
            removed_entries,
            removed_texts,
          },
          'query audit: removed entries past the retention',
        )
        if (e.removal.breaks.length > 0) {
          logger.warn(
            { event: 'query_audit_retention', checkpoint_id, breaks: e.removal.breaks },
            'query audit: entries were already missing in the stretch retention removed',
          )
        }
      } else {
        logger.warn(
          { event: 'query_audit_retention', err: String(e.error) },
          'query audit: retention run failed; retried at the next run',
        )
      }
    },
  })
  const closers: (() => Promise<void>)[] = [() => store.close()]
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => {})
  }
  try {
    const created = await ensureInitialAdmin(store, config.initialAdmin)
    if (created) logger.info({ event: 'initial_admin', user: created.username }, 'admin created')
    const jwt = await resolveJwtSecret({ configured: config.jwtSecret, dataDir: config.dataDir })
    if (jwt.source === 'ephemeral') {
      logger.warn({ event: 'jwt_secret' }, 'admin tokens use a per-process secret')
    }
    // One throttle for both planes: a password guessed on either is the same password.
    const logins = new LoginGuard(
      new LoginThrottle(config.loginThrottle),
      (record) => store.logins.record(record),
      both(loginGuardLog(logger), (line) => metrics.loginLine(line)),
      (scope, key) => store.changes.signal({ type: 'login_throttle_cleared', scope, key }),
    )
    // A throttle cleared through another instance's admin API is cleared here too.
    store.changes.onSignal((signal) => {
      if (signal.type === 'login_throttle_cleared') logins.throttle.clear(signal.scope, signal.key)
    })
    const backend = createStoreBackend(store, {
      ...(config.dataPlane?.tokenClockSkewSeconds !== undefined
        ? { clockSkewSeconds: config.dataPlane.tokenClockSkewSeconds }
        : {}),
      observe: (result, elapsedMs) => metrics.tokenLogin(result.refusal === null, elapsedMs),
    })
    // Benchmarks only (bench/pgbench, bench/pooling): each query-audit row is built as usual and
    // dropped at the hand-off to the store, so a bench can set the store's write path apart.
    if (process.env['PALISADE_BENCH_DISCARD_QUERY_AUDIT'] === '1') {
      logger.warn({ event: 'query_audit' }, 'query audit discarded: benchmark mode')
      backend.audit = () => {}
    }
    const dataPlane = await createDataPlane({
      logins,
      backend,
      ...config.dataPlane,
      ...(config.upstreamFactory ? { upstreamFactory: config.upstreamFactory } : {}),
      log: dataPlaneLog(logger),
      onSession: connectionLog(logger),
      onLoginEvent: both(loginLog(logger), (e) => metrics.loginEvent(e)),
      onUpstreamEvent: both(upstreamLog(logger), (e) => metrics.upstreamEvent(e)),
      observer: metrics,
    })
    const readiness = new Readiness({ store, upstreams: () => dataPlane.upstreamStatuses() })
    metrics.attach({
      store,
      sessions: () => dataPlane.connections,
      upstreamPools: () => dataPlane.upstreamPools(),
      readiness,
    })
    closers.push(() => dataPlane.close())
    const app = createAdminApp({
      store,
      logins,
      metrics,
      readiness,
      ...(config.admin?.metricsToken ? { metricsToken: config.admin.metricsToken } : {}),
      jwtSecret: jwt.secret,
      logger: adminAppLog(logger),
      version: VERSION,
      ...(config.admin?.tokenTtlSeconds ? { tokenTtlSeconds: config.admin.tokenTtlSeconds } : {}),
      ...(config.admin?.corsOrigins ? { corsOrigins: config.admin.corsOrigins } : {}),
      ...(config.admin?.consoleUrl ? { consoleUrl: config.admin.consoleUrl } : {}),
      onCatalogReady: (id) => dataPlane.warmUpstream(id),
      // One skew for both planes' identity provider tokens (`--token-clock-skew`).
      ...(config.dataPlane?.tokenClockSkewSeconds !== undefined
        ? { tokenClockSkewSeconds: config.dataPlane.tokenClockSkewSeconds }
        : {}),
    })
    const host = config.admin?.host ?? '127.0.0.1'
    const tls = config.admin?.tls
    const http = createAdaptorServer({
      fetch: withRequestLog(logger, app.fetch),
      ...(tls ? { createServer: createHttpsServer, serverOptions: { ...tls } } : {}),
    })
    const port = await listen(http, config.admin?.port ?? 5435, host)
    closers.push(() => closeHttp(http))
    const admin = { host, port, url: `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}` }
    logger.info(
      { event: 'started', data_plane: `${dataPlane.host}:${dataPlane.port}`, admin: admin.url },
      'palisade started',
    )
    const server: PalisadeServer = {
      store,
      dataPlane,
      admin,
      logger,
      async close() {
        await closeAll()
        logger.info({ event: 'stopped' }, 'palisade stopped')
      },
    }
    if (config.handleSignals) closeOnSignals(() => server.close(), logger)
    return server
  } catch (error) {
    await closeAll()
    throw error
  }
}

/** One callback that calls two (a log line and a metric). */
function both<T>(first: (value: T) => void, second: (value: T) => void): (value: T) => void {
  return (value) => {
    first(value)
    second(value)
  }
}

function listen(server: ServerType, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve((server.address() as AddressInfo).port)
    })
  })
}

function closeHttp(server: ServerType): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
  })
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0'
  } catch {
    return '0.0.0'
  }
}
