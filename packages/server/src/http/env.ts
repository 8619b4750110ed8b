import type { Store, User } from '@palisade/store'
import type { DiscoveryJobs } from '../discovery/discovery-jobs.js'
import type { Readiness } from '../health/readiness.js'
import type { LoginGuard } from '../logins/login-guard.js'
import type { ConsoleSignIns } from '../sso/console-sign-in.js'
import type { AdminTokenClaims } from './jwt.js'

/** Per-request values the middleware chain hands to later handlers. */
export interface AdminVariables {
  /** The response's `X-Request-Id`. */
  requestId: string
  /** The authenticated user, read from the store on this request. */
  user: User
  /**
   * The request's verified token: its claims, its id (jwt.ts `tokenId`) and whether it came in
   * the console's session cookie rather than the `Authorization` header.
   */
  token: { claims: AdminTokenClaims; id: string; viaCookie: boolean }
}

/** Hono environment of the admin app. */
export interface AdminEnv {
  Variables: AdminVariables
}

/** What every route handler can reach besides the request. */
export interface AdminDeps {
  store: Store
  jwtSecret: string
  tokenTtlSeconds: number
  version: string
  logger: (entry: Record<string, unknown>) => void
  /** This instance's discovery jobs (docs/admin-api.md#catalog-discovery). */
  discovery: DiscoveryJobs
  /** Failed-login throttle, audit and log, shared with the data plane. */
  logins: LoginGuard
  /** The server's metrics, when it keeps them (`GET /metrics`). */
  metrics?: { render(): Promise<{ contentType: string; body: string }> } | undefined
  /** The bearer token a Prometheus scraper sends to `GET /metrics`. */
  metricsToken?: string | undefined
  /** What `GET /ready` checks (docs/operations.md#probes). */
  readiness: Readiness
  /** Admin sign-in to the console through identity providers (docs/sso.md#console-sign-in). */
  consoleSignIns: ConsoleSignIns
  /** The console's public address, the providers' redirect URI; default: the request's origin + `/ui`. */
  consoleUrl?: string | undefined
  /** Readies the data plane for a datasource whose catalog a job just saved or synced. */
  onCatalogReady?: ((datasourceId: string) => Promise<void>) | undefined
}
