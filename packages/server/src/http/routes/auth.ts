import { ApiError } from '../api-error.js'
import { checkCredentials } from '../credentials.js'
import { newTokenId, signToken } from '../jwt.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { loginBody } from '../schemas/auth.js'

/**
 * `POST /auth/login`, `POST /auth/logout` and `GET /auth/me` (docs/admin-api.md#signing-in); not in the admin
 * audit. Failed and throttled logins go to the login audit (`GET /audit/logins`).
 */
export const authRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/auth/login',
    summary: 'Exchange admin credentials for a bearer token',
    tag: 'auth',
    auth: 'none',
    status: 200,
    body: loginBody,
    async handler({ c, deps, body }) {
      const user = await checkCredentials(deps, c, body.username, body.password)
      if (!user.is_admin) throw new ApiError(403, 'admin_required', 'admin access is required')
      await deps.store.users.recordLogin(user.id)
      const iat = Math.floor(Date.now() / 1000)
      const exp = iat + deps.tokenTtlSeconds
      const token = signToken(
        { sub: user.id, username: user.username, is_admin: true, iat, exp, jti: newTokenId() },
        deps.jwtSecret,
      )
      return c.json({
        token,
        token_type: 'Bearer',
        expires_at: new Date(exp * 1000).toISOString(),
        user: await deps.store.users.get(user.id),
      })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/logout',
    summary:
      'End the bearer token of the request, and no other (on every instance sharing the store)',
    tag: 'auth',
    auth: 'user',
    status: 204,
    async handler({ c, deps }) {
      const { claims, id } = c.get('token')
      await deps.store.tokens.revoke(id, claims.sub, new Date(claims.exp * 1000))
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
    handler: ({ c }) => c.json(c.get('user')),
  }),
]
