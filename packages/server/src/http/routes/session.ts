import { sessionAnswer } from '../answers/user-answers.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { loginBody } from '../schemas/auth.js'
import { csrfToken, startSession } from '../session-cookie.js'
import { signIn } from '../sign-in.js'

/**
 * The web console's session (docs/console.md#signing-in): signing in sets the token as an
 * HttpOnly cookie instead of handing it to the page, and both routes answer the CSRF token the
 * page sends with every write. `POST /auth/logout` ends the session.
 */
export const sessionRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/auth/session',
    summary: 'Sign in to the web console: the token goes into an HttpOnly, SameSite=Strict cookie',
    tag: 'auth',
    auth: 'none',
    status: 200,
    response: sessionAnswer,
    body: loginBody,
    async handler({ c, deps, body }) {
      return startSession(c, deps, await signIn(deps, c, body.username, body.password))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/session',
    summary: 'The signed-in console session (after a reload or in a new tab) and its CSRF token',
    tag: 'auth',
    status: 200,
    response: sessionAnswer,
    handler({ c, deps }) {
      const { claims, id } = c.get('token')
      return c.json({
        csrf_token: csrfToken(id, deps.jwtSecret),
        expires_at: new Date(claims.exp * 1000).toISOString(),
        user: c.get('user'),
      })
    },
  }),
]
