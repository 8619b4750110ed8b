import type { Store } from '@palisade/store'
import { simulate } from '../../preview/simulation.js'
import { ApiError } from '../api-error.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { simulationBody } from '../schemas/simulations.js'

/** Distinct statements replayed unless `window.max_queries` says otherwise. */
const DEFAULT_MAX_QUERIES = 100
/** Rows counted per statement and side unless `max_rows` says otherwise. */
const DEFAULT_MAX_ROWS = 1000

/** The datasource by id or by name: exactly one of the two. */
async function datasourceIdOf(
  store: Store,
  body: { datasource_id?: string | null | undefined; datasource_name?: string | null | undefined },
): Promise<string> {
  const byId = body.datasource_id ?? undefined
  const byName = body.datasource_name ?? undefined
  if ((byId === undefined) === (byName === undefined)) {
    throw new ApiError(422, 'validation_failed', 'request body is invalid', [
      {
        field: 'datasource_id',
        code: byId === undefined ? 'required' : 'not_allowed',
        message: 'give datasource_id or datasource_name',
      },
    ])
  }
  if (byId !== undefined) return byId
  const ds = await store.datasources.findByName(byName as string)
  if (!ds) throw new ApiError(404, 'not_found', 'datasource not found')
  return ds.id
}

/** What-if replay of the query audit under a proposed change (docs/preview-and-simulation.md). */
export const simulationRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/simulations',
    summary: 'Replay audited queries under the current and a proposed (unsaved) policy change',
    tag: 'preview',
    status: 200,
    body: simulationBody,
    async handler({ c, deps, body, actorId }) {
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
          datasourceId: await datasourceIdOf(deps.store, body),
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
