import { ApiError } from '../api-error.js'
import { clientAddress } from '../client-address.js'
import { signToken } from '../jwt.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { loginBody } from '../schemas/auth.js'

/**
 * `POST /auth/login`, `POST /auth/logout` and `GET /auth/me` (admin-api 2); not in the admin
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
      const attempt = {
        plane: 'admin' as const,
        username: body.username,
        address: clientAddress(c),
      }
      const decision = deps.logins.check(attempt)
      if (decision.throttled) {
        // Checked before the password, so a throttled guess costs no key derivation either.
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
        throw new ApiError(
          429,
          'too_many_attempts',
          `too many failed logins; try again in ${seconds} s`,
          [],
          { 'Retry-After': String(seconds) },
        )
      }
      const { user, reason } = await deps.store.users.checkPassword(body.username, body.password)
      // Unknown user, wrong password and inactive user all answer the same (admin-api 2).
      if (!user) {
        deps.logins.failed(attempt, reason)
        throw new ApiError(401, 'invalid_credentials', 'invalid username or password')
      }
      deps.logins.succeeded(attempt)
      if (!user.is_admin) throw new ApiError(403, 'admin_required', 'admin access is required')
      await deps.store.users.recordLogin(user.id)
      const iat = Math.floor(Date.now() / 1000)
      const exp = iat + deps.tokenTtlSeconds
      const token = signToken(
        { sub: user.id, username: user.username, is_admin: true, iat, exp },
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
    summary: 'End the bearer token of the request (on every instance sharing the store)',
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
