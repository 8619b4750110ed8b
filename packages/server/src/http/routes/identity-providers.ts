import type { CreateIdentityProviderInput } from '@palisade/store'
import {
  identityProviderAnswer,
  identityProviderPageAnswer,
} from '../answers/identity-provider-answers.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  createIdentityProviderBody,
  listIdentityProvidersQuery,
  updateIdentityProviderBody,
} from '../schemas/identity-providers.js'

const TAG = 'identity-providers'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/identity-providers/{id}',
    summary: 'Update an identity provider partially (the client secret is write-only)',
    tag: TAG,
    status: 200,
    response: identityProviderAnswer,
    params: idParams,
    body: updateIdentityProviderBody,
    exists: (deps, p) => deps.store.identityProviders.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as Partial<CreateIdentityProviderInput>
      return c.json(await deps.store.identityProviders.update(params.id, input, actorId))
    },
  })
}

/** OpenID Connect identity providers for token logins (docs/sso.md). */
export const identityProviderRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/identity-providers',
    summary: 'List identity providers',
    tag: TAG,
    status: 200,
    response: identityProviderPageAnswer,
    query: listIdentityProvidersQuery,
    async handler({ c, deps, query }) {
      const page = { ...toPageInput(query), search: query.search }
      return c.json(await deps.store.identityProviders.list(page))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/identity-providers',
    summary: 'Create an identity provider',
    tag: TAG,
    status: 201,
    response: identityProviderAnswer,
    body: createIdentityProviderBody,
    async handler({ c, deps, body, actorId }) {
      const input = body as CreateIdentityProviderInput
      const idp = await deps.store.identityProviders.create(input, actorId)
      return created(c, `/identity-providers/${idp.id}`, idp)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/identity-providers/{id}',
    summary: 'Get an identity provider',
    tag: TAG,
    status: 200,
    response: identityProviderAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) =>
      c.json(await deps.store.identityProviders.get(params.id)),
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/identity-providers/{id}',
    summary: 'Delete an identity provider and the role memberships its claims granted',
    tag: TAG,
    status: 204,
    params: idParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.identityProviders.delete(params.id, actorId)
      return noContent(c)
    },
  }),
]
