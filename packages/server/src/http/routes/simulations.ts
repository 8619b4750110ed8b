import { resolveDatasource } from '../../preview/preview-session.js'
import { simulate } from '../../preview/simulation.js'
import { simulationAnswer } from '../answers/simulation-answers.js'
import { ApiError } from '../api-error.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { simulationBody } from '../schemas/simulations.js'
import { requireOneOf } from '../validation.js'

/** Distinct statements replayed unless `window.max_queries` says otherwise. */
const DEFAULT_MAX_QUERIES = 100
/** Rows counted per statement and side unless `max_rows` says otherwise. */
const DEFAULT_MAX_ROWS = 1000

/** What-if replay of the query audit under a proposed change (docs/preview-and-simulation.md). */
export const simulationRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/simulations',
    summary: 'Replay audited queries under the current and a proposed (unsaved) policy change',
    tag: 'preview',
    status: 200,
    response: simulationAnswer,
    body: simulationBody,
    async handler({ c, deps, body, actorId }) {
      requireOneOf(body as Record<string, unknown>, 'datasource_id', 'datasource_name')
      for (const [i, update] of (body.changes.update_policies ?? []).entries()) {
        if (typeof update['id'] !== 'string') {
          throw new ApiError(422, 'validation_failed', 'request body is invalid', [
            { field: `changes.update_policies[${i}].id`, code: 'required', message: 'is required' },
          ])
        }
      }
      const window = body.window ?? {}
      const result = await simulate(
        deps.store,
        {
          datasourceId:
            body.datasource_id ??
            (await resolveDatasource(deps.store, { datasourceName: body.datasource_name ?? '' }))
              .id,
          changes: body.changes as never,
          window: {
            ...(window.user_ids ? { userIds: window.user_ids } : {}),
            ...(window.from ? { from: window.from } : {}),
            ...(window.to ? { to: window.to } : {}),
            maxQueries: window.max_queries ?? DEFAULT_MAX_QUERIES,
          },
          execute: body.execute ?? true,
          maxRows: body.max_rows ?? DEFAULT_MAX_ROWS,
        },
        actorId,
      )
      await deps.store.audit.actions.simulation(actorId, {
        datasource_id: result.datasource.id,
        changes: body.changes,
        window,
        summary: result.summary,
      })
      return c.json(result)
    },
  }),
]
