import { RewritePool } from '@palisade/core'
import type { Store } from '@palisade/store'
import { type DataPlaneConfig, DEFAULT_DATA_PLANE_CONFIG } from '../config.js'
import type { LoginEvent } from '../pgwire/admission.js'
import { CancelRegistry } from '../pgwire/cancel-registry.js'
import { type Listener, startListener } from '../pgwire/listener.js'
import type { UpstreamEvent } from '../upstream/upstream.types.js'
import {
  type UpstreamFactory,
  UpstreamRegistry,
  upstreamFactoryWithEvents,
} from '../upstream/upstream-registry.js'
import type { DataPlaneBackend } from './backend.js'
import { type SessionEvent, SessionRegistry } from './live-session.js'
import { createStoreBackend } from './store-backend.js'

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
}

/** A running data plane. */
export interface DataPlane {
  /** The bound port. */
  readonly port: number
  readonly host: string
  /** Connected client sessions. */
  readonly connections: number
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
  const backend = options.backend ?? (options.store ? createStoreBackend(options.store) : undefined)
  if (!backend) throw new Error('createDataPlane needs a store or a backend')
  const config = { ...DEFAULT_DATA_PLANE_CONFIG, ...definedOnly(options) }
  if (config.requireTls && !config.tls)
    throw new Error('requireTls needs a TLS certificate and key')
  const log = options.log ?? ((message, error) => console.error(message, error))
  const sessions = new SessionRegistry(backend, options.onSession)
  const rewriter = new RewritePool({
    maxStatementBytes: config.maxStatementBytes,
    rewriteTimeoutMs: config.rewriteTimeoutMs,
    workers: config.rewriteWorkers,
  })
  rewriter.start()
  const upstreams = new UpstreamRegistry(
    (id) => backend.upstreamConfig(id),
    options.upstreamFactory ?? upstreamFactoryWithEvents(options.onUpstreamEvent),
  )
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
        rewriter,
        requireTls: config.requireTls,
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
    async close() {
      // Connections first: statements in progress finish (and are audited) before sessions go.
      await listener.close()
      sessions.close()
      await Promise.all([upstreams.close(), rewriter.close()])
    },
  }
}

function definedOnly(options: Partial<DataPlaneConfig>): Partial<DataPlaneConfig> {
  const out: Partial<DataPlaneConfig> = {}
  if (options.host !== undefined) out.host = options.host
  if (options.port !== undefined) out.port = options.port
  if (options.tls !== undefined) out.tls = options.tls
  if (options.requireTls !== undefined) out.requireTls = options.requireTls
  if (options.acquireTimeoutMs !== undefined) out.acquireTimeoutMs = options.acquireTimeoutMs
  if (options.maxConnections !== undefined) out.maxConnections = options.maxConnections
  if (options.idleTimeoutMs !== undefined) out.idleTimeoutMs = options.idleTimeoutMs
  if (options.loginTimeoutMs !== undefined) out.loginTimeoutMs = options.loginTimeoutMs
  if (options.maxPendingConnections !== undefined) {
    out.maxPendingConnections = options.maxPendingConnections
  }
  if (options.maxPendingPerAddress !== undefined) {
    out.maxPendingPerAddress = options.maxPendingPerAddress
  }
  if (options.maxMessageBytes !== undefined) out.maxMessageBytes = options.maxMessageBytes
  if (options.shutdownGraceMs !== undefined) out.shutdownGraceMs = options.shutdownGraceMs
  if (options.maxStatementBytes !== undefined) out.maxStatementBytes = options.maxStatementBytes
  if (options.rewriteTimeoutMs !== undefined) out.rewriteTimeoutMs = options.rewriteTimeoutMs
  if (options.rewriteWorkers !== undefined) out.rewriteWorkers = options.rewriteWorkers
  return out
}
