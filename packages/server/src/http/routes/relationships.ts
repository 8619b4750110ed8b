import { anchorCoverage } from '../../discovery/anchor-coverage.js'
import { fkSuggestions } from '../../discovery/fk-suggestions.js'
import { anchorCoverageAnswer } from '../answers/anchor-coverage-answers.js'
import {
  anchorAnswer,
  anchorListAnswer,
  fkSuggestionsAnswer,
  relationshipAnswer,
  relationshipListAnswer,
} from '../answers/relationship-answers.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  anchorParams,
  createAnchorBody,
  createRelationshipBody,
  listRelationshipsQuery,
  relationshipParams,
} from '../schemas/relationships.js'

const TAG = 'relationships'

/** Table relationships and column anchors (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const relationshipRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/relationships',
    summary: 'Relationships of a datasource',
    tag: TAG,
    status: 200,
    response: relationshipListAnswer,
    params: idParams,
    query: listRelationshipsQuery,
    async handler({ c, deps, params, query }) {
      const filter = query.child_table_id ? { child_table_id: query.child_table_id } : {}
      return c.json(await deps.store.relationships.list(params.id, filter))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/relationships',
    summary: 'Create a child-to-parent relationship',
    tag: TAG,
    status: 201,
    response: relationshipAnswer,
    params: idParams,
    body: createRelationshipBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const rel = await deps.store.relationships.create(params.id, body, actorId)
      return created(c, `/datasources/${params.id}/relationships/${rel.id}`, rel)
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/datasources/{id}/relationships/{relationship_id}',
    summary: 'Delete a relationship no anchor uses',
    tag: TAG,
    status: 204,
    params: relationshipParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.relationships.delete(params.id, params.relationship_id, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/column-anchors',
    summary: 'Column anchors of a datasource',
    tag: TAG,
    status: 200,
    response: anchorListAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      return c.json(await deps.store.relationships.listAnchors(params.id))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/column-anchors',
    summary: 'Create a column anchor (walk or alias)',
    tag: TAG,
    status: 201,
    response: anchorAnswer,
    params: idParams,
    body: createAnchorBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const anchor = await deps.store.relationships.createAnchor(params.id, body, actorId)
      return created(c, `/datasources/${params.id}/column-anchors/${anchor.id}`, anchor)
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/datasources/{id}/column-anchors/{anchor_id}',
    summary: 'Delete a column anchor',
    tag: TAG,
    status: 204,
    params: anchorParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.relationships.deleteAnchor(params.id, params.anchor_id, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/fk-suggestions',
    summary: 'Suggest relationships from the live upstream foreign keys',
    tag: TAG,
    status: 200,
    response: fkSuggestionsAnswer,
    params: idParams,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    handler: async ({ c, deps, params }) => c.json(await fkSuggestions(deps, params.id)),
  }),
  defineRoute({
    method: 'GET',
    path: '/policies/{id}/anchor-coverage',
    summary: 'Dry-run row-filter column resolution over the exposed tables',
    tag: TAG,
    status: 200,
    response: anchorCoverageAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await anchorCoverage(deps, params.id)),
  }),
]
