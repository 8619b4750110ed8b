import { classifyDatasource } from '../../classification/classify.js'
import {
  classificationAnswer,
  objectTagsAnswer,
  objectTagsListAnswer,
  tagProposalAnswer,
  tagProposalListAnswer,
} from '../answers/catalog-tag-answers.js'
import { ApiError } from '../api-error.js'
import { noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import {
  listProposalsQuery,
  listTagsQuery,
  proposalParams,
  removeTagQuery,
  setTagsBody,
} from '../schemas/catalog-tags.js'
import { idParams } from '../schemas/common.js'

const TAG = 'catalog'

function decideRoute(verdict: 'accept' | 'reject') {
  return defineRoute({
    method: 'POST',
    path: `/datasources/{id}/tag-proposals/{proposal_id}/${verdict}`,
    summary:
      verdict === 'accept'
        ? 'Accept a proposed tag: the column gets it'
        : 'Reject a proposed tag: it is not proposed again',
    tag: TAG,
    status: 200,
    response: tagProposalAnswer,
    params: proposalParams,
    handler: async ({ c, deps, params, actorId }) =>
      c.json(await deps.store.catalogTags.decide(params.id, params.proposal_id, verdict, actorId)),
  })
}

/** Catalog tags, classification and its proposals (docs/policies.md, "Tags"). */
export const catalogTagRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/tags',
    summary: 'Tagged tables and columns (`tag` keeps those under one tag)',
    tag: TAG,
    status: 200,
    response: objectTagsListAnswer,
    params: idParams,
    query: listTagsQuery,
    handler: async ({ c, deps, params, query }) =>
      c.json(await deps.store.catalogTags.list(params.id, { tag: query.tag })),
  }),
  defineRoute({
    method: 'PUT',
    path: '/datasources/{id}/tags',
    summary: "Replace one table's or column's tags ([] removes them)",
    tag: TAG,
    status: 200,
    response: objectTagsAnswer,
    params: idParams,
    body: setTagsBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    handler: async ({ c, deps, params, body, actorId }) =>
      c.json(await deps.store.catalogTags.set(params.id, body, actorId)),
  }),
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/tags',
    summary: 'Add tags to one table or column (the tags it has stay)',
    tag: TAG,
    status: 200,
    response: objectTagsAnswer,
    params: idParams,
    body: setTagsBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    handler: async ({ c, deps, params, body, actorId }) =>
      c.json(await deps.store.catalogTags.add(params.id, body, actorId)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/datasources/{id}/tags',
    summary:
      'Remove one tag from one table or column (query: schema_name, table_name, column_name, tag)',
    tag: TAG,
    status: 204,
    params: idParams,
    query: removeTagQuery,
    async handler({ c, deps, params, query, actorId }) {
      await deps.store.catalogTags.remove(
        params.id,
        {
          schema_name: query.schema_name,
          table_name: query.table_name,
          column_name: query.column_name ?? null,
          tags: [query.tag],
        },
        actorId,
      )
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/tag-proposals',
    summary: 'Tags classification proposed (pending unless `status` says otherwise)',
    tag: TAG,
    status: 200,
    response: tagProposalListAnswer,
    params: idParams,
    query: listProposalsQuery,
    handler: async ({ c, deps, params, query }) =>
      c.json(await deps.store.catalogTags.proposals(params.id, { status: query.status })),
  }),
  decideRoute('accept'),
  decideRoute('reject'),
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/classify',
    summary: 'Classify the exposed columns now (names, and sampled values unless turned off)',
    tag: TAG,
    status: 200,
    response: classificationAnswer,
    params: idParams,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, actorId }) {
      try {
        return c.json(await classifyDatasource(deps.store, params.id, actorId))
      } catch (error) {
        if (error instanceof ApiError || (error as { status?: number }).status) throw error
        // The driver's message may name hosts: it goes to the operator log only.
        deps.logger({
          level: 'warn',
          msg: 'classification could not read the upstream',
          datasource_id: params.id,
          error: (error as Error).message,
        })
        throw new ApiError(
          502,
          'upstream_error',
          'the upstream database could not be read; test the datasource connection',
        )
      }
    },
  }),
]
