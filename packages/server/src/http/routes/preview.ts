import { previewSession } from '../../preview/preview-session.js'
import { previewAnswer } from '../answers/preview-answers.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { previewBody } from '../schemas/preview.js'
import { requireOneOf } from '../validation.js'

/** Rows a preview keeps per statement unless `limit` says otherwise. */
const DEFAULT_LIMIT = 100

/** Preview as a user (docs/preview-and-simulation.md). */
export const previewRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/preview',
    summary: "What a user's session would do with SQL: rewrite, policies, refusal, rows",
    tag: 'preview',
    status: 200,
    response: previewAnswer,
    body: previewBody,
    async handler({ c, deps, body, actorId }) {
      const raw = body as Record<string, unknown>
      requireOneOf(raw, 'user_id', 'username')
      requireOneOf(raw, 'datasource_id', 'datasource_name')
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
