import { annotateExpansion } from '../catalog-expansion.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'

const TAG = 'catalog'

/** The stored catalog view (admin-api 7.2); discovery jobs live in `discovery.ts` (7.1). */
export const catalogRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/catalog',
    summary: 'The stored catalog, unfiltered, without an upstream call',
    tag: TAG,
    status: 200,
    params: idParams,
    handler: async ({ c, deps, params }) =>
      c.json(await annotateExpansion(await deps.store.catalog.get(params.id))),
  }),
]
