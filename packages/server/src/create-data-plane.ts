import { RewritePool } from '@palisade/core'
import type { Store } from '@palisade/store'
import { type DataPlaneConfig, DEFAULT_DATA_PLANE_CONFIG } from './config.js'
import type { DataPlaneBackend } from './data-plane/backend.js'
import { type SessionEvent, SessionRegistry } from './data-plane/live-session.js'
import { LocalStatementGate, type StatementGate } from './data-plane/statement-gate.js'
import { createStoreBackend } from './data-plane/store-backend.js'
import { LoginGuard } from './logins/login-guard.js'
import { LoginThrottle } from './logins/login-throttle.js'
import type { DataPlaneObserver } from './metrics/server-metrics.js'
import type { LoginEvent } from './pgwire/admission.js'
import { CancelRegistry } from './pgwire/cancel-registry.js'
import type { Rewriter } from './pgwire/connection-context.js'
import { type Listener, startListener } from './pgwire/listener.js'
import type { IssuerKeysOptions } from './sso/issuer-keys.js'
import type { TokenLoginResult } from './sso/token-logins.js'
import type { UpstreamEvent, UpstreamPoolState, UpstreamStatus } from './upstream/upstream.types.js'
import {
  type UpstreamFactory,
  UpstreamRegistry,
  upstreamFactoryWithEvents,
} from './upstream/upstream-registry.js'

/** Options of `createDataPlane`: a store (or a backend) plus listener settings. */
export interface DataPlaneOptions extends Partial<DataPlaneConfig> {
  /** The resource store; wrapped with `createStoreBackend`. */
  store?: Store
  /** A backend other than the store (tests); wins over `store`. */
  backend?: DataPlaneBackend
  /** Makes each datasource's upstream provider (default: PostgreSQL pool or embedded PGlite). */
  upstreamFactory?: UpstreamFactory
  /** Operator log for internal errors (default: console.error). */
  log?: (message: string, error?: unknown) => void
  /** Called when a client session starts and ends (operator connection log). */
  onSession?: (event: SessionEvent) => void
  /** Called when a login times out or a pending connection is dropped (operator log). */
  onLoginEvent?: (event: LoginEvent) => void
  /** Called when a datasource's upstream goes away and comes back (operator log). */
  onUpstreamEvent?: (event: UpstreamEvent) => void
  /**
   * The failed-login throttle, audit and log (`palisade serve` shares one with the admin API);
   * default: a throttle with the default limits, auditing through the backend, no log.
   */
  logins?: LoginGuard
  /** Metrics of statements, rewrites and refused connections (`palisade serve`: /metrics). */
  observer?: DataPlaneObserver
  /** How identity providers' keys are fetched and cached (token logins; docs/sso.md). */
  issuerKeys?: IssuerKeysOptions
  /**
   * Where rate and concurrency limits are counted (docs/roles-and-access.md#limits); default:
   * the backend's (shared by the instances of a PostgreSQL store), else in this process.
   */
  statementGate?: StatementGate
}

/** A running data plane. */
export interface DataPlane {
  /** The bound port. */
  readonly port: number
  readonly host: string
  /** Connected client sessions. */
  readonly connections: number
  /** Each PostgreSQL datasource's upstream pool now (started pools only). */
  upstreamPools(): UpstreamPoolState[]
  /** What was last seen of each used datasource's upstream (readiness). */
  upstreamStatuses(): UpstreamStatus[]
  /** Opens a PostgreSQL datasource's upstream pool now rather than at its first login. */
  warmUpstream(datasourceId: string): Promise<void>
  /** Stops listening, closes client connections and upstream sessions. */
  close(): Promise<void>
}

/**
 * Starts the data plane: a pgwire listener that authenticates users against the store, binds each
 * client to an upstream session and enforces policies on every statement.
 *
 * ```ts
 * const store = await createStore({ dataDir: './data' })
 * const plane = await createDataPlane({ store, port: 5434 })
 * // psql "postgresql://alice:secret@127.0.0.1:5434/shop"
 * await plane.close()
 * ```
 */
export async function createDataPlane(options: DataPlaneOptions): Promise<DataPlane> {
  const config = {
    ...DEFAULT_DATA_PLANE_CONFIG,
    poolMode: poolModeFromEnv() ?? DEFAULT_DATA_PLANE_CONFIG.poolMode,
    ...definedOnly(options),
  }
  const observer = options.observer
  const sso = {
    ...options.issuerKeys,
    clockSkewSeconds: config.tokenClockSkewSeconds,
    observe: observer?.tokenLogin
      ? (result: TokenLoginResult, elapsedMs: number) =>
          observer.tokenLogin?.(result.refusal === null, elapsedMs)
      : undefined,
  }
  const backend =
    options.backend ?? (options.store ? createStoreBackend(options.store, sso) : undefined)
  if (!backend) throw new Error('createDataPlane needs a store or a backend')
  if (config.requireTls && !config.tls)
    throw new Error('requireTls needs a TLS certificate and key')
  const log = options.log ?? ((message, error) => console.error(message, error))
  const sessions = new SessionRegistry(backend, options.onSession)
  const rewriter = new RewritePool({
    maxStatementBytes: config.maxStatementBytes,
    rewriteTimeoutMs: config.rewriteTimeoutMs,
    workers: config.rewriteWorkers,
  })
  // No worker until a long or catalog statement needs one: an idle worker holds about 24 MB,
  // and starting one costs that first statement about 100 ms once.
  const upstreams = new UpstreamRegistry(async (id) => {
    const upstream = await backend.upstreamConfig(id)
    if (upstream.kind !== 'postgres') return upstream
    return {
      ...upstream,
      poolMode: upstream.poolMode ?? config.poolMode,
      connectTimeoutMs: upstream.connectTimeoutMs ?? config.upstreamConnectTimeoutMs,
    }
  }, options.upstreamFactory ?? upstreamFactoryWithEvents(options.onUpstreamEvent))
  let listener: Listener
  try {
    listener = await startListener({
      host: config.host,
      port: config.port,
      tls: config.tls,
      maxMessageBytes: config.maxMessageBytes,
      idleTimeoutMs: config.idleTimeoutMs,
      maxConnections: config.maxConnections,
      loginTimeoutMs: config.loginTimeoutMs,
      maxPendingConnections: config.maxPendingConnections,
      maxPendingPerAddress: config.maxPendingPerAddress,
      shutdownGraceMs: config.shutdownGraceMs,
      onLoginEvent: options.onLoginEvent,
      services: {
        backend,
        sessions,
        upstreams,
        cancels: new CancelRegistry(),
        acquireTimeoutMs: config.acquireTimeoutMs,
        literalParameters: config.literalParameters,
        rewriter: options.observer ? timedRewriter(rewriter, options.observer) : rewriter,
        observer: options.observer,
        gate: options.statementGate ?? backend.statementGate?.() ?? new LocalStatementGate(),
        requireTls: config.requireTls,
        tokenLogins: config.tokenLogins
          ? {
              withoutTls: config.tokenLoginsWithoutTls,
              sessionGraceMs: config.tokenSessionGraceSeconds * 1000,
            }
          : undefined,
        logins:
          options.logins ??
          new LoginGuard(new LoginThrottle(), (record) => backend.auditLogin?.(record)),
        log,
      },
    })
  } catch (error) {
    sessions.close()
    await rewriter.close()
    throw error
  }
  return {
    port: listener.port,
    host: config.host,
    get connections() {
      return sessions.size
    },
    upstreamPools: () => upstreams.poolStates(),
    upstreamStatuses: () => upstreams.statuses(),
    warmUpstream: (id) => upstreams.warm(id),
    async close() {
      // Connections first: statements in progress finish (and are audited) before sessions go.
      await listener.close()
      sessions.close()
      await Promise.all([upstreams.close(), rewriter.close()])
    },
  }
}

/**
 * `PALISADE_POOL_MODE`, for embedders and test suites as for `palisade serve`: the pool mode of
 * datasources that set none, unless `poolMode` is passed.
 */
function poolModeFromEnv(): DataPlaneConfig['poolMode'] | undefined {
  const value = process.env['PALISADE_POOL_MODE']
  if (value === undefined || value === '') return undefined
  if (value === 'session' || value === 'transaction') return value
  throw new Error('PALISADE_POOL_MODE must be session or transaction')
}

/** The settings `options` sets: every key of the config (`tls` has no default), none undefined. */
function definedOnly(options: Partial<DataPlaneConfig>): Partial<DataPlaneConfig> {
  const keys = [...Object.keys(DEFAULT_DATA_PLANE_CONFIG), 'tls'] as (keyof DataPlaneConfig)[]
  const out: Record<string, unknown> = {}
  for (const key of keys) if (options[key] !== undefined) out[key] = options[key]
  return out as Partial<DataPlaneConfig>
}

/** The rewriter, reporting each rewrite's time (a worker's too, once it answers). */
function timedRewriter(pool: RewritePool, observer: DataPlaneObserver): Rewriter {
  return {
    rewrite(sql, session) {
      const started = performance.now()
      const result = pool.rewrite(sql, session)
      if (!(result instanceof Promise)) {
        observer.rewrite(performance.now() - started)
        return result
      }
      return result.finally(() => observer.rewrite(performance.now() - started))
    },
  }
}
