import { loginAnswer, userAnswer } from '../answers/user-answers.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { loginBody } from '../schemas/auth.js'
import { clearSessionCookie } from '../session-cookie.js'
import { signIn } from '../sign-in.js'
import { sessionRoutes } from './session.js'
import { ssoRoutes } from './sso.js'

/**
 * `POST /auth/login`, `POST /auth/logout` and `GET /auth/me` (docs/admin-api.md#signing-in),
 * and the console's session (`/auth/session`); not in the admin audit. Failed and throttled
 * logins go to the login audit (`GET /audit/logins`).
 */
export const authRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/auth/login',
    summary: 'Exchange admin credentials for a bearer token',
    tag: 'auth',
    auth: 'none',
    status: 200,
    response: loginAnswer,
    body: loginBody,
    async handler({ c, deps, body }) {
      const { token, claims, user } = await signIn(deps, c, body.username, body.password)
      return c.json({
        token,
        token_type: 'Bearer',
        expires_at: new Date(claims.exp * 1000).toISOString(),
        user,
      })
    },
  }),
  ...sessionRoutes,
  ...ssoRoutes,
  defineRoute({
    method: 'POST',
    path: '/auth/logout',
    summary:
      'End the token of the request, and no other (on every instance sharing the store); a console session also loses its cookie',
    tag: 'auth',
    auth: 'user',
    status: 204,
    async handler({ c, deps }) {
      const { claims, id, viaCookie } = c.get('token')
      await deps.store.tokens.revoke(id, claims.sub, new Date(claims.exp * 1000))
      if (viaCookie) clearSessionCookie(c)
      return c.body(null, 204)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/me',
    summary: 'The user of the token (admin or not)',
    tag: 'auth',
    auth: 'user',
    status: 200,
    response: userAnswer,
    handler: ({ c }) => c.json(c.get('user')),
  }),
]
