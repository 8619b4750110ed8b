import type { AccessRequest, User } from '@palisade/store'
import { accessRequestAnswer, accessRequestPageAnswer } from '../answers/access-request-answers.js'
import { ApiError } from '../api-error.js'
import { toPageInput } from '../pagination.js'
import { created } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import {
  approveAccessRequestBody,
  createAccessRequestBody,
  denyAccessRequestBody,
  listAccessRequestsQuery,
} from '../schemas/access-requests.js'
import { idParams } from '../schemas/common.js'

const TAG = 'access-requests'

function requireAdmin(user: User): void {
  if (!user.is_admin) throw new ApiError(403, 'admin_required', 'admin access is required')
}

/** Someone else's request is answered as missing, so ids of others' requests reveal nothing. */
function visibleTo(user: User, request: AccessRequest): AccessRequest {
  if (!user.is_admin && request.user_id !== user.id) {
    throw new ApiError(404, 'not_found', 'access request not found')
  }
  return request
}

/**
 * Access requests (docs/policies.md "Requested access"). Any user reaches these routes with
 * their own username and password (HTTP Basic) or, as an admin, a bearer token; users see and
 * cancel their own requests, admins see all and approve or deny them.
 */
export const accessRequestRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/access-requests',
    summary: 'Ask for a role or a datasource for a while (any user, own credentials)',
    tag: TAG,
    auth: 'user',
    status: 201,
    response: accessRequestAnswer,
    body: createAccessRequestBody,
    async handler({ c, deps, body }) {
      const request = await deps.store.accessRequests.create(c.get('user').id, body)
      return created(c, `/access-requests/${request.id}`, request)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/access-requests',
    summary: 'List access requests, newest first (a user sees only their own)',
    tag: TAG,
    auth: 'user',
    status: 200,
    response: accessRequestPageAnswer,
    query: listAccessRequestsQuery,
    async handler({ c, deps, query }) {
      const user = c.get('user')
      return c.json(
        await deps.store.accessRequests.list({
          ...toPageInput(query),
          status: query.status,
          user_id: user.is_admin ? query.user_id : user.id,
        }),
      )
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/access-requests/{id}',
    summary: 'Get one access request',
    tag: TAG,
    auth: 'user',
    status: 200,
    response: accessRequestAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      return c.json(visibleTo(c.get('user'), await deps.store.accessRequests.get(params.id)))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/access-requests/{id}/approve',
    summary: 'Approve a pending request (admin; not the requester), creating the time-bound grant',
    tag: TAG,
    status: 200,
    response: accessRequestAnswer,
    params: idParams,
    body: approveAccessRequestBody,
    bodyOptional: true,
    async handler({ c, deps, params, body, actorId }) {
      requireAdmin(c.get('user'))
      return c.json(await deps.store.accessRequests.approve(params.id, body, actorId))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/access-requests/{id}/deny',
    summary: 'Deny a pending request (admin; not the requester)',
    tag: TAG,
    status: 200,
    response: accessRequestAnswer,
    params: idParams,
    body: denyAccessRequestBody,
    bodyOptional: true,
    async handler({ c, deps, params, body, actorId }) {
      requireAdmin(c.get('user'))
      return c.json(await deps.store.accessRequests.deny(params.id, body, actorId))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/access-requests/{id}/cancel',
    summary: 'Withdraw your own pending request',
    tag: TAG,
    auth: 'user',
    status: 200,
    response: accessRequestAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      return c.json(await deps.store.accessRequests.cancel(params.id, c.get('user').id))
    },
  }),
]
