import { ApiError } from '../api-error.js'
import { defineRoute, type RouteSpec } from '../route-table.js'

/** `GET /health` (docs/operations.md): 503 unavailable when the store does not answer. */
export const healthRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/health',
    summary: 'Liveness and version',
    tag: 'health',
    auth: 'none',
    status: 200,
    async handler({ c, deps }) {
      try {
        await deps.store.users.list({ page_size: 1 })
      } catch {
        throw new ApiError(503, 'unavailable', 'the store is unreachable')
      }
      return c.json({ status: 'ok', version: deps.version })
    },
  }),
]
