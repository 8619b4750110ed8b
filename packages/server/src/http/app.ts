import type { Store } from '@palisade/store'
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { DiscoveryJobs } from '../discovery/discovery-jobs.js'
import { Readiness } from '../health/readiness.js'
import { LoginGuard } from '../logins/login-guard.js'
import { LoginThrottle } from '../logins/login-throttle.js'
import { ConsoleSignIns } from '../sso/console-sign-in.js'
import { requireAuth } from './auth.js'
import { mountConsole } from './console.js'
import type { AdminDeps, AdminEnv } from './env.js'
import { createErrorHandler, errorResponse } from './error-handler.js'
import { API_PREFIX } from './paths.js'
import { requestHeaders } from './request-headers.js'
import { type RouteSpec, registerRoutes } from './route-table.js'
import { accessRoutes } from './routes/access.js'
import { accessRequestRoutes } from './routes/access-requests.js'
import { assignmentRoutes } from './routes/assignments.js'
import { attributeRoutes } from './routes/attributes.js'
import { auditRoutes } from './routes/audit.js'
import { authRoutes } from './routes/auth.js'
import { catalogRoutes } from './routes/catalog.js'
import { catalogTagRoutes } from './routes/catalog-tags.js'
import { datasourceRoutes } from './routes/datasources.js'
import { decisionFunctionRoutes } from './routes/decision-functions.js'
import { discoveryRoutes } from './routes/discovery.js'
import { healthRoutes } from './routes/health.js'
import { identityProviderRoutes } from './routes/identity-providers.js'
import { loginThrottleRoutes } from './routes/login-throttles.js'
import { metricsRoutes } from './routes/metrics.js'
import { openApiRoute } from './routes/openapi.js'
import { policyRoutes } from './routes/policies.js'
import { policyBundleRoutes } from './routes/policy-bundles.js'
import { previewRoutes } from './routes/preview.js'
import { relationshipRoutes } from './routes/relationships.js'
import { roleRoutes } from './routes/roles.js'
import { simulationRoutes } from './routes/simulations.js'
import { userIdentityRoutes } from './routes/user-identity.js'
import { userRoutes } from './routes/users.js'

/** Options of {@link createAdminApp}. */
export interface AdminAppOptions {
  store: Store
  /** HS256 key for admin tokens; at least 32 bytes (docs/admin-api.md#signing-in). */
  jwtSecret: string
  /** Token lifetime; default 86400, allowed 300 to 2,592,000. */
  tokenTtlSeconds?: number
  /** Allowed CORS origins; CORS stays off when empty or absent. */
  corsOrigins?: string[]
  /** Structured log sink for internal errors; default writes JSON lines to stderr. */
  logger?: (entry: Record<string, unknown>) => void
  /** Reported by `/health` and the OpenAPI document. */
  version?: string
  /**
   * The failed-login throttle, audit and log (`palisade serve` shares one with the data plane);
   * default: a throttle with the default limits, auditing to the store, no log.
   */
  logins?: LoginGuard
  /** Metrics served at `GET /metrics` (absent: the route answers 404). */
  metrics?: AdminDeps['metrics']
  /** Bearer token of `GET /metrics` besides admin tokens; at least 16 characters. */
  metricsToken?: string
  /** Serve the web console at `/ui` (default true). */
  console?: boolean
  /** What `GET /ready` checks; default: the store and its change feed, no upstreams. */
  readiness?: Readiness
  /** Clock skew tolerated on identity provider tokens (default 30 s; docs/sso.md). */
  tokenClockSkewSeconds?: number
  /**
   * The console's public address (`https://palisade.example.com/ui`), registered at identity
   * providers as the redirect URI; default: the origin the request reached + `/ui`.
   */
  consoleUrl?: string
  /**
   * Called when a catalog job has saved or synced a datasource's catalog, before the job reports
   * done (`palisade serve`: opens the datasource's upstream pool, so its first login does not).
   */
  onCatalogReady?: (datasourceId: string) => Promise<void>
}

const DEFAULT_TTL_SECONDS = 86_400

function defaultLogger(entry: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`)
}

/** Routes outside `/api/v1`: health, readiness and metrics. */
const rootRoutes: readonly RouteSpec[] = [...healthRoutes, ...metricsRoutes]

/** Every `/api/v1` route, in one table that serves routing, 405s and the OpenAPI document. */
const API_ROUTES: readonly RouteSpec[] = [
  ...authRoutes,
  ...userRoutes,
  ...userIdentityRoutes,
  ...datasourceRoutes,
  ...identityProviderRoutes,
  ...catalogRoutes,
  ...discoveryRoutes,
  ...accessRoutes,
  ...accessRequestRoutes,
  ...catalogTagRoutes,
  ...assignmentRoutes,
  ...relationshipRoutes,
  ...policyRoutes,
  ...attributeRoutes,
  ...decisionFunctionRoutes,
  ...previewRoutes,
  ...simulationRoutes,
  ...policyBundleRoutes,
  ...roleRoutes,
  ...auditRoutes,
  ...loginThrottleRoutes,
]

/**
 * Builds the admin REST API (admin-api.md) as a Hono app; mount it with `@hono/node-server`
 * or call `app.request()` in tests. Mutations are audited by the store with the token's user.
 *
 * ```ts
 * const app = createAdminApp({ store, jwtSecret: process.env.PALISADE_ADMIN_JWT_SECRET! })
 * serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 5435 })
 * ```
 */
export function createAdminApp(options: AdminAppOptions): Hono<AdminEnv> {
  if (Buffer.byteLength(options.jwtSecret) < 32) {
    throw new Error('the admin jwt secret must be at least 32 bytes')
  }
  const ttl = options.tokenTtlSeconds ?? DEFAULT_TTL_SECONDS
  if (!Number.isInteger(ttl) || ttl < 300 || ttl > 2_592_000) {
    throw new Error('the admin token ttl must be an integer from 300 to 2592000 seconds')
  }
  if (options.metricsToken !== undefined && options.metricsToken.length < 16) {
    throw new Error('the metrics token must be at least 16 characters')
  }
  const deps: AdminDeps = {
    metrics: options.metrics,
    metricsToken: options.metricsToken,
    store: options.store,
    jwtSecret: options.jwtSecret,
    tokenTtlSeconds: ttl,
    version: options.version ?? '0.0.0',
    logger: options.logger ?? defaultLogger,
    discovery: new DiscoveryJobs(),
    logins:
      options.logins ??
      new LoginGuard(new LoginThrottle(), (record) => options.store.logins.record(record)),
    readiness: options.readiness ?? new Readiness({ store: options.store }),
    consoleSignIns: new ConsoleSignIns(options.store, {
      clockSkewSeconds: options.tokenClockSkewSeconds,
    }),
    consoleUrl: options.consoleUrl,
    onCatalogReady: options.onCatalogReady,
  }
  const apiRoutes: RouteSpec[] = [...API_ROUTES, openApiRoute(() => table)]
  const table: (RouteSpec & { fullPath: string })[] = [
    ...rootRoutes.map((r) => ({ ...r, fullPath: r.path })),
    ...apiRoutes.map((r) => ({ ...r, fullPath: `${API_PREFIX}${r.path}` })),
  ]

  // `strict: false` makes `/users/` the same route as `/users` (docs/admin-api.md#conventions).
  const app = new Hono<AdminEnv>({ strict: false })
  app.use('*', requestHeaders())
  if (options.corsOrigins && options.corsOrigins.length > 0) {
    app.use(
      '*',
      cors({
        origin: options.corsOrigins,
        allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        allowHeaders: ['Authorization', 'Content-Type'],
        exposeHeaders: ['X-Request-Id', 'Location'],
      }),
    )
  }
  // Authentication precedes routing (check order step 1), so it also guards unknown paths.
  app.use(API_PREFIX, requireAuth(deps))
  app.use(`${API_PREFIX}/*`, requireAuth(deps))
  registerRoutes(app, '', rootRoutes, deps)
  registerRoutes(app, API_PREFIX, apiRoutes, deps)
  if (options.console !== false) mountConsole(app)
  app.notFound((c) => errorResponse(c, 404, 'not_found', 'route not found'))
  app.onError(createErrorHandler(deps.logger))
  return app
}

/** @internal The paths and methods of every route, for tests. */
export function listAdminRoutes(): { method: string; path: string }[] {
  return [
    ...rootRoutes.map((r) => ({ method: r.method, path: r.path })),
    ...API_ROUTES.map((r) => ({ method: r.method, path: `${API_PREFIX}${r.path}` })),
    { method: 'GET', path: `${API_PREFIX}/openapi.json` },
  ]
}
