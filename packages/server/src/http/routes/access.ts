import {
  accessSummaryAnswer,
  accessUsersAnswer,
  windowedRolesAnswer,
} from '../answers/access-answers.js'
import { noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import {
  allAccessBody,
  grantWindowBody,
  roleAccessBody,
  roleAccessParams,
  userAccessBody,
  userAccessParams,
} from '../schemas/access.js'
import { idParams } from '../schemas/common.js'

const TAG = 'access'

/** Datasource access lists (docs/roles-and-access.md#datasource-access); the replacements accept PUT only. */
export const accessRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/access',
    summary: 'Access summary of a datasource',
    tag: TAG,
    status: 200,
    response: accessSummaryAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.access.get(params.id)),
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/users',
    summary: 'Users with direct access',
    tag: TAG,
    status: 200,
    response: accessUsersAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.access.listUsers(params.id)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/datasources/{id}/users',
    summary: 'Replace the user-scoped access list',
    tag: TAG,
    status: 204,
    params: idParams,
    body: userAccessBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      await deps.store.access.setUsers(params.id, body, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/access/roles',
    summary: 'Roles with access',
    tag: TAG,
    status: 200,
    response: windowedRolesAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.access.listRoles(params.id)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/datasources/{id}/access/roles',
    summary: 'Replace the role-scoped access list',
    tag: TAG,
    status: 204,
    params: idParams,
    body: roleAccessBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      await deps.store.access.setRoles(params.id, body, actorId)
      return noContent(c)
    },
  }),
  ...oneSubjectRoutes('user', '/datasources/{id}/users/{user_id}', userAccessParams),
  ...oneSubjectRoutes('role', '/datasources/{id}/access/roles/{role_id}', roleAccessParams),
  defineRoute({
    method: 'PUT',
    path: '/datasources/{id}/access/all',
    summary: 'Turn access for everyone on or off',
    tag: TAG,
    status: 204,
    params: idParams,
    body: allAccessBody,
    exists: (deps, p) => deps.store.datasources.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      await deps.store.access.setAll(params.id, body, actorId)
      return noContent(c)
    },
  }),
]

/** Grant (optionally for a validity window) and revoke of one user's or one role's access. */
function oneSubjectRoutes(
  scope: 'user' | 'role',
  path: string,
  params: typeof userAccessParams | typeof roleAccessParams,
): RouteSpec[] {
  const subject = (p: { user_id: string } | { role_id: string }) => ({
    scope,
    id: 'user_id' in p ? p.user_id : p.role_id,
  })
  return [
    defineRoute({
      method: 'PUT',
      path,
      summary: `Grant one ${scope} access, optionally for a validity window`,
      tag: TAG,
      status: 204,
      params,
      body: grantWindowBody,
      exists: (deps, p) => deps.store.datasources.get(p.id),
      async handler({ c, deps, params: p, body, actorId }) {
        await deps.store.access.grant(p.id, subject(p), body, actorId)
        return noContent(c)
      },
    }),
    defineRoute({
      method: 'DELETE',
      path,
      summary: `Revoke one ${scope}'s access`,
      tag: TAG,
      status: 204,
      params,
      async handler({ c, deps, params: p, actorId }) {
        await deps.store.access.revoke(p.id, subject(p), actorId)
        return noContent(c)
      },
    }),
  ]
}
