import { previewSession } from '../../preview/preview-session.js'
import { ApiError } from '../api-error.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { previewBody } from '../schemas/preview.js'

/** Rows a preview keeps per statement unless `limit` says otherwise. */
const DEFAULT_LIMIT = 100

/** Exactly one of two fields; neither or both is a 422 naming them. */
function oneOf(body: Record<string, unknown>, a: string, b: string): void {
  const given = [a, b].filter((f) => body[f] !== undefined && body[f] !== null)
  if (given.length === 1) return
  const message = given.length === 0 ? `give ${a} or ${b}` : `give ${a} or ${b}, not both`
  throw new ApiError(422, 'validation_failed', 'request body is invalid', [
    { field: given[1] ?? a, code: given.length === 0 ? 'required' : 'not_allowed', message },
  ])
}

/** Preview as a user (admin-api 19). */
export const previewRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/preview',
    summary: "What a user's session would do with SQL: rewrite, policies, refusal, rows",
    tag: 'preview',
    status: 200,
    body: previewBody,
    async handler({ c, deps, body, actorId }) {
      const raw = body as Record<string, unknown>
      oneOf(raw, 'user_id', 'username')
      oneOf(raw, 'datasource_id', 'datasource_name')
      const result = await previewSession(deps.store, {
        userId: body.user_id ?? undefined,
        username: body.username ?? undefined,
        datasourceId: body.datasource_id ?? undefined,
        datasourceName: body.datasource_name ?? undefined,
        sql: body.sql,
        execute: body.execute ?? false,
        limit: body.limit ?? DEFAULT_LIMIT,
      })
      await deps.store.audit.actions.preview(actorId, {
        user_id: result.user.id,
        datasource_id: result.datasource.id,
        sql: body.sql,
        executed: result.executed,
      })
      return c.json(result)
    },
  }),
]
