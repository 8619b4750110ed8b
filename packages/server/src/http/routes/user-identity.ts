import type { UserIdentity } from '@palisade/store'
import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant } from '../answers/answer-of.js'
import { noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'

const TAG = 'users'

/** A user's link to an identity provider subject. */
const userIdentityAnswer = answerOf<UserIdentity>()(
  v.strictObject({
    identity_provider_id: id,
    subject: v.string(),
    admin_granted: v.boolean(),
    created_at: instant,
  }),
)

/**
 * A user's identity at a provider (docs/sso.md#linking-users-ahead-of-their-first-login): set by an
 * admin before the user's first token login or console sign-in, so only that subject logs in as
 * them; otherwise the first login records it.
 */
export const userIdentityRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/users/{id}/identity',
    summary: "The user's link to an identity provider subject (404 when not linked)",
    tag: TAG,
    status: 200,
    response: userIdentityAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) =>
      c.json(await deps.store.identityProviders.links.get(params.id)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/users/{id}/identity',
    summary: 'Link a user to an identity provider subject ahead of their first login',
    tag: TAG,
    status: 200,
    response: userIdentityAnswer,
    params: idParams,
    body: bodySchemas.userIdentity,
    exists: (deps, p) => deps.store.users.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      return c.json(await deps.store.identityProviders.links.link(params.id, body, actorId))
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/users/{id}/identity',
    summary: "Remove the user's link: the next login with a token links them again",
    tag: TAG,
    status: 204,
    params: idParams,
    exists: (deps, p) => deps.store.users.get(p.id),
    async handler({ c, deps, params, actorId }) {
      await deps.store.identityProviders.links.unlink(params.id, actorId)
      return noContent(c)
    },
  }),
]
