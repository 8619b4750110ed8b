import { discoveryWork } from '../../discovery/discovery-work.js'
import { discoveryJobAnswer, discoveryStartedAnswer } from '../answers/discovery-answers.js'
import { ApiError, type ApiErrorDetail } from '../api-error.js'
import { API_PREFIX } from '../paths.js'
import { noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import { type DiscoverRequest, discoverBody, jobParams } from '../schemas/discovery.js'

const TAG = 'catalog'

/**
 * The rules of a `save_catalog` body beyond its schema (docs/admin-api.md#catalog-discovery): visible schema names
 * (the alias, or the upstream name) are unique, and so are schema and table names.
 */
function selectionProblems(request: DiscoverRequest): ApiErrorDetail[] {
  if (request.action !== 'save_catalog') return []
  const details: ApiErrorDetail[] = []
  const visible = new Set<string>()
  const upstream = new Set<string>()
  for (const [i, s] of request.schemas.entries()) {
    const label = s.schema_alias || s.schema_name
    if (upstream.has(s.schema_name)) {
      const message = `schema ${s.schema_name} is listed twice`
      details.push({ field: `schemas[${i}].schema_name`, code: 'duplicate', message })
    } else if (visible.has(label)) {
      const message = `visible name ${label} is used twice`
      details.push({ field: `schemas[${i}].schema_alias`, code: 'duplicate', message })
    }
    visible.add(label)
    upstream.add(s.schema_name)
    const tables = new Set<string>()
    for (const [j, t] of s.tables.entries()) {
      if (tables.has(t.table_name)) {
        const message = `table ${s.schema_name}.${t.table_name} is listed twice`
        details.push({ field: `schemas[${i}].tables[${j}].table_name`, code: 'duplicate', message })
      }
      tables.add(t.table_name)
    }
  }
  return details
}

/** Discovery jobs (docs/admin-api.md#catalog-discovery): submitted, polled and cancelled; kept in memory. */
export const discoveryRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/discover',
    summary: 'Start a discovery job (discover, save_catalog or sync_catalog)',
    tag: TAG,
    status: 202,
    response: discoveryStartedAnswer,
    params: idParams,
    body: discoverBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    handler({ c, deps, params, body, actorId }) {
      const details = selectionProblems(body)
      if (details.length > 0) {
        throw new ApiError(422, 'validation_failed', 'request body is invalid', details)
      }
      const work = discoveryWork(deps, params.id, actorId, body)
      const job = deps.discovery.start(params.id, body.action, work)
      c.header('Location', `${API_PREFIX}/datasources/${params.id}/discover/${job.job_id}`)
      return c.json({ job_id: job.job_id }, 202)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/discover/{job_id}',
    summary: 'Poll a discovery job',
    tag: TAG,
    status: 200,
    response: discoveryJobAnswer,
    params: jobParams,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    handler: ({ c, deps, params }) => c.json(deps.discovery.get(params.id, params.job_id)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/datasources/{id}/discover/{job_id}',
    summary: 'Cancel a running discovery job',
    tag: TAG,
    status: 204,
    params: jobParams,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    handler({ c, deps, params }) {
      deps.discovery.cancel(params.id, params.job_id)
      return noContent(c)
    },
  }),
]
