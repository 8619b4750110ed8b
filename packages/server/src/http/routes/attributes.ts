import type { CreateAttributeInput } from '@palisade/store'
import { attributeAnswer, attributePageAnswer } from '../answers/attribute-answers.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import {
  attributeParams,
  createAttributeBody,
  deleteAttributeQuery,
  listAttributesQuery,
  updateAttributeBody,
} from '../schemas/attributes.js'

const TAG = 'attribute-definitions'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/attribute-definitions/{id}',
    summary: 'Update an attribute definition partially',
    tag: TAG,
    status: 200,
    response: attributeAnswer,
    params: attributeParams,
    body: updateAttributeBody,
    exists: (deps, p) => deps.store.attributes.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as Partial<CreateAttributeInput>
      return c.json(await deps.store.attributes.update(params.id, input, actorId))
    },
  })
}

/** Attribute definitions (docs/resources.md#attribute-definitions). */
export const attributeRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/attribute-definitions',
    summary: 'List attribute definitions',
    tag: TAG,
    status: 200,
    response: attributePageAnswer,
    query: listAttributesQuery,
    async handler({ c, deps, query }) {
      const filter = { ...toPageInput(query), search: query.search, entity_type: query.entity_type }
      return c.json(await deps.store.attributes.list(filter))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/attribute-definitions',
    summary: 'Create an attribute definition',
    tag: TAG,
    status: 201,
    response: attributeAnswer,
    body: createAttributeBody,
    async handler({ c, deps, body, actorId }) {
      const def = await deps.store.attributes.create(body as CreateAttributeInput, actorId)
      return created(c, `/attribute-definitions/${def.id}`, def)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/attribute-definitions/{id}',
    summary: 'Get an attribute definition',
    tag: TAG,
    status: 200,
    response: attributeAnswer,
    params: attributeParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.attributes.get(params.id)),
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/attribute-definitions/{id}',
    summary: 'Delete an attribute definition (force=true removes user values)',
    tag: TAG,
    status: 204,
    params: attributeParams,
    query: deleteAttributeQuery,
    async handler({ c, deps, params, query, actorId }) {
      await deps.store.attributes.delete(params.id, { force: query.force === 'true' }, actorId)
      return noContent(c)
    },
  }),
]
