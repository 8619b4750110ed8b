/**
 * @module
 * `@palisade/server`: the data plane, a read-only, policy-enforcing PostgreSQL wire-protocol
 * proxy in front of PostgreSQL or an embedded PGlite.
 *
 * ```ts
 * import { createDataPlane } from '@palisade/server'
 * const plane = await createDataPlane({ store, port: 5434 })
 * ```
 */

export { type Demo, type DemoOptions, startDemo } from './cli/demo.js'
export {
  type DataPlaneConfig,
  DEFAULT_DATA_PLANE_CONFIG,
  dataPlaneConfigFromEnv,
} from './config.js'
export {
  createDataPlane,
  type DataPlane,
  type DataPlaneOptions,
} from './create-data-plane.js'
export {
  createServer,
  type PalisadeServer,
  type ServerConfig,
  type TlsFiles,
} from './create-server.js'
export type {
  AuditRow,
  DataPlaneBackend,
  ScramCredentials,
  SessionChange,
} from './data-plane/backend.js'
export type { SessionEvent } from './data-plane/live-session.js'
export {
  type GatedUser,
  type LeaveStatement,
  LimitError,
  LocalStatementGate,
  type StatementGate,
} from './data-plane/statement-gate.js'
export { createStoreBackend } from './data-plane/store-backend.js'
export { type AdminAppOptions, createAdminApp } from './http/index.js'
export { createLogger, type Logger, type LogLevel } from './logging/logger.js'
export {
  type FailureReason,
  type LoginAttempt,
  LoginGuard,
  type LoginLogLine,
} from './logins/login-guard.js'
export {
  DEFAULT_LOGIN_THROTTLE,
  LoginThrottle,
  type LoginThrottleConfig,
  type ThrottleDecision,
} from './logins/login-throttle.js'
export { createPgliteUpstream, type PgliteUpstreamOptions } from './upstream/pglite-upstream.js'
export { PostgresPool } from './upstream/postgres-pool.js'
export type * from './upstream/upstream.types.js'
export { defaultUpstreamFactory, type UpstreamFactory } from './upstream/upstream-registry.js'
export { WireError, WireSqlState } from './wire/wire-error.js'
