import type { AssignPolicyInput } from '@palisade/store'
import { assignmentAnswer, assignmentListAnswer } from '../answers/policy-answers.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { assignBody, assignmentParams } from '../schemas/assignments.js'
import { idParams } from '../schemas/common.js'

const TAG = 'assignments'

/** Policy assignments on a datasource (docs/roles-and-access.md#policy-assignments). */
export const assignmentRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/policies',
    summary: 'Assignments on a datasource',
    tag: TAG,
    status: 200,
    response: assignmentListAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.assignments.list(params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/datasources/{id}/policies',
    summary: 'Assign a policy',
    tag: TAG,
    status: 201,
    response: assignmentAnswer,
    params: idParams,
    body: assignBody,
    // scope_mismatch (400) must precede the schema's 422 (docs/admin-api.md#errors); the store checks both.
    storeValidatesBody: true,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as AssignPolicyInput
      const out = await deps.store.assignments.assign(params.id, input, actorId)
      return created(c, `/datasources/${params.id}/policies/${out.id}`, out)
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/datasources/{id}/policies/{assignment_id}',
    summary: 'Remove an assignment',
    tag: TAG,
    status: 204,
    params: assignmentParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.assignments.unassign(params.id, params.assignment_id, actorId)
      return noContent(c)
    },
  }),
]
