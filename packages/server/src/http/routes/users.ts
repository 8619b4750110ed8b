import type { CreateUserInput, UpdateUserInput } from '@palisade/store'
import { windowedRolesAnswer } from '../answers/access-answers.js'
import { effectivePoliciesAnswer } from '../answers/check-answers.js'
import { effectiveLimitsAnswer } from '../answers/limits-answers.js'
import { userAnswer, userPageAnswer } from '../answers/user-answers.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  createUserBody,
  effectivePoliciesQuery,
  listUsersQuery,
  passwordBody,
  updateUserBody,
} from '../schemas/users.js'

const TAG = 'users'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/users/{id}',
    summary: 'Update a user partially',
    tag: TAG,
    status: 200,
    response: userAnswer,
    params: idParams,
    body: updateUserBody,
    exists: (deps, p) => deps.store.users.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      return c.json(await deps.store.users.update(params.id, body as UpdateUserInput, actorId))
    },
  })
}

/** Users (docs/resources.md#users) and effective policies (docs/roles-and-access.md#checking-what-applies-to-a-user). */
export const userRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/users',
    summary: 'List users',
    tag: TAG,
    status: 200,
    response: userPageAnswer,
    query: listUsersQuery,
    async handler({ c, deps, query }) {
      return c.json(await deps.store.users.list({ ...toPageInput(query), search: query.search }))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/users',
    summary: 'Create a user',
    tag: TAG,
    status: 201,
    response: userAnswer,
    body: createUserBody,
    async handler({ c, deps, body, actorId }) {
      const user = await deps.store.users.create(body as CreateUserInput, actorId)
      return created(c, `/users/${user.id}`, user)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/users/{id}',
    summary: 'Get a user',
    tag: TAG,
    status: 200,
    response: userAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.users.get(params.id)),
  }),
  defineRoute({
    method: 'GET',
    path: '/users/{id}/effective-limits',
    summary: "A user's effective row and rate limits",
    tag: TAG,
    status: 200,
    response: effectiveLimitsAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) =>
      c.json(await deps.store.users.effectiveLimits(params.id)),
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/users/{id}',
    summary: 'Delete a user',
    tag: TAG,
    status: 204,
    params: idParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.users.delete(params.id, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/users/{id}/password',
    summary: 'Set a user password',
    tag: TAG,
    status: 200,
    response: userAnswer,
    params: idParams,
    body: passwordBody,
    exists: (deps, p) => deps.store.users.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      return c.json(await deps.store.users.setPassword(params.id, body, actorId))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/users/{id}/roles',
    summary: 'The roles a user is a direct member of, sorted by name',
    tag: TAG,
    status: 200,
    response: windowedRolesAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      return c.json(await deps.store.roles.ofUser(params.id))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/users/{id}/effective-policies',
    summary: 'Assignments that reach a user on one datasource',
    tag: TAG,
    status: 200,
    response: effectivePoliciesAnswer,
    params: idParams,
    query: effectivePoliciesQuery,
    async handler({ c, deps, params, query }) {
      await deps.store.users.get(params.id)
      await deps.store.datasources.get(query.datasource_id)
      return c.json(await deps.store.sessions.effectivePolicies(params.id, query.datasource_id))
    },
  }),
]
