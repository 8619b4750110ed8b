import type { CreateRoleInput } from '@palisade/store'
import {
  effectiveMembersAnswer,
  roleAnswer,
  roleDetailAnswer,
  roleImpactAnswer,
  rolePageAnswer,
} from '../answers/role-answers.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  addMembersBody,
  addParentBody,
  createRoleBody,
  listRolesQuery,
  memberParams,
  parentParams,
  putMemberBody,
  updateRoleBody,
} from '../schemas/roles.js'

const TAG = 'roles'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/roles/{id}',
    summary: 'Update a role partially',
    tag: TAG,
    status: 200,
    response: roleAnswer,
    params: idParams,
    body: updateRoleBody,
    exists: (deps, p) => deps.store.roles.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as Partial<CreateRoleInput>
      return c.json(await deps.store.roles.update(params.id, input, actorId))
    },
  })
}

/** Roles, members and inheritance (docs/roles-and-access.md#roles). */
export const roleRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/roles',
    summary: 'List roles',
    tag: TAG,
    status: 200,
    response: rolePageAnswer,
    query: listRolesQuery,
    async handler({ c, deps, query }) {
      return c.json(await deps.store.roles.list({ ...toPageInput(query), search: query.search }))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/roles',
    summary: 'Create a role',
    tag: TAG,
    status: 201,
    response: roleAnswer,
    body: createRoleBody,
    async handler({ c, deps, body, actorId }) {
      const role = await deps.store.roles.create(body as CreateRoleInput, actorId)
      return created(c, `/roles/${role.id}`, role)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/roles/{id}',
    summary: 'Get a role with members, edges, assignments and access',
    tag: TAG,
    status: 200,
    response: roleDetailAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.roles.get(params.id)),
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/roles/{id}',
    summary: 'Delete a role; returns the impact computed before the delete',
    tag: TAG,
    // The one delete with a body (docs/roles-and-access.md#roles).
    status: 200,
    response: roleImpactAnswer,
    params: idParams,
    handler: async ({ c, deps, params, actorId }) =>
      c.json(await deps.store.roles.delete(params.id, actorId)),
  }),
  defineRoute({
    method: 'GET',
    path: '/roles/{id}/effective-members',
    summary: 'Users who are members directly or through child roles',
    tag: TAG,
    status: 200,
    response: effectiveMembersAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      return c.json(await deps.store.roles.effectiveMembers(params.id))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/roles/{id}/impact',
    summary: 'What deleting or deactivating the role would touch',
    tag: TAG,
    status: 200,
    response: roleImpactAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.roles.impact(params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/roles/{id}/members',
    summary: 'Add direct members (all or nothing)',
    tag: TAG,
    status: 204,
    params: idParams,
    body: addMembersBody,
    exists: (deps, p) => deps.store.roles.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      await deps.store.roles.addMembers(params.id, body, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/roles/{id}/members/{user_id}',
    summary: 'Make a user a direct member for a validity window (created or re-windowed)',
    tag: TAG,
    status: 204,
    params: memberParams,
    body: putMemberBody,
    exists: (deps, p) => deps.store.roles.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      await deps.store.roles.putMember(params.id, params.user_id, body, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/roles/{id}/members/{user_id}',
    summary: 'Remove a direct member',
    tag: TAG,
    status: 204,
    params: memberParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.roles.removeMember(params.id, params.user_id, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/roles/{id}/parents',
    summary: 'Add a parent role',
    tag: TAG,
    status: 204,
    params: idParams,
    body: addParentBody,
    exists: (deps, p) => deps.store.roles.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      await deps.store.roles.addParent(params.id, body, actorId)
      return noContent(c)
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/roles/{id}/parents/{parent_id}',
    summary: 'Remove a parent role',
    tag: TAG,
    status: 204,
    params: parentParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.roles.removeParent(params.id, params.parent_id, actorId)
      return noContent(c)
    },
  }),
]
