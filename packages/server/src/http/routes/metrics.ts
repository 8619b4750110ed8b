import { createHash, timingSafeEqual } from 'node:crypto'
import * as v from 'valibot'
import { ApiError } from '../api-error.js'
import { authenticate } from '../auth.js'
import { defineRoute, type RouteSpec } from '../route-table.js'

const BEARER = /^bearer\s+(\S+)\s*$/i

/** Compares digests, so neither the length nor the content of the token leaks through timing. */
function sameToken(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

/**
 * `GET /metrics`: Prometheus exposition text (docs/operations.md, "Metrics"). A scraper sends the
 * metrics token (`--metrics-token`) as a bearer token; an admin's API token works too. 404 when
 * the server keeps no metrics (an embedder's bare admin app).
 */
export const metricsRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics (bearer: the metrics token or an admin token)',
    tag: 'health',
    auth: 'none',
    status: 200,
    // Text exposition format 0.0.4, not JSON (openapi.ts gives it `text/plain`).
    response: v.string(),
    async handler({ c, deps }) {
      if (!deps.metrics) throw new ApiError(404, 'not_found', 'route not found')
      const header = c.req.header('authorization')
      const given = header === undefined ? undefined : BEARER.exec(header)?.[1]
      const byToken =
        given !== undefined && !!deps.metricsToken && sameToken(given, deps.metricsToken)
      if (!byToken) {
        const { user } = await authenticate(deps.store, header, deps.jwtSecret)
        if (!user.is_admin) throw new ApiError(403, 'admin_required', 'admin access is required')
      }
      const { contentType, body } = await deps.metrics.render()
      return c.body(body, 200, { 'Content-Type': contentType })
    },
  }),
]
