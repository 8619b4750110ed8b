import type { CreateDatasourceInput } from '@palisade/store'
import { probeUpstream } from '../../upstream/upstream-probe.js'
import { probeAnswer } from '../answers/check-answers.js'
import {
  datasourceAnswer,
  datasourcePageAnswer,
  datasourceTypesAnswer,
} from '../answers/datasource-answers.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  createDatasourceBody,
  listDatasourcesQuery,
  updateDatasourceBody,
} from '../schemas/datasources.js'

const TAG = 'datasources'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/datasources/{id}',
    summary: 'Update a datasource partially (config merges key by key)',
    tag: TAG,
    status: 200,
    response: datasourceAnswer,
    params: idParams,
    body: updateDatasourceBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as Partial<CreateDatasourceInput>
      return c.json(await deps.store.datasources.update(params.id, input, actorId))
    },
  })
}

/** Datasources (docs/resources.md#datasources). */
export const datasourceRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasource-types',
    summary: 'Datasource types and their config fields',
    tag: TAG,
    status: 200,
    response: datasourceTypesAnswer,
    handler: ({ c, deps }) => c.json(deps.store.datasources.types()),
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources',
    summary: 'List datasources',
    tag: TAG,
    status: 200,
    response: datasourcePageAnswer,
    query: listDatasourcesQuery,
    async handler({ c, deps, query }) {
      const page = { ...toPageInput(query), search: query.search }
      return c.json(await deps.store.datasources.list(page))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/datasources',
    summary: 'Create a datasource',
    tag: TAG,
    status: 201,
    response: datasourceAnswer,
    body: createDatasourceBody,
    async handler({ c, deps, body, actorId }) {
      const ds = await deps.store.datasources.create(body as CreateDatasourceInput, actorId)
      return created(c, `/datasources/${ds.id}`, ds)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}',
    summary: 'Get a datasource',
    tag: TAG,
    status: 200,
    response: datasourceAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.datasources.get(params.id)),
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/datasources/{id}',
    summary: 'Delete a datasource',
    tag: TAG,
    status: 204,
    params: idParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.datasources.delete(params.id, actorId)
      // A running discovery job of the datasource is cancelled with it (docs/resources.md#datasources).
      deps.discovery.cancelDatasource(params.id)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/test',
    summary: 'Open one upstream connection and report the server version',
    tag: TAG,
    status: 200,
    response: probeAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      const conn = await deps.store.datasources.getConnection(params.id)
      return c.json(await probeUpstream(conn))
    },
  }),
]
