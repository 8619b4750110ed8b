import { isStoreError, type Store, type User } from '@palisade/store'
import type { MiddlewareHandler } from 'hono'
import { ApiError } from './api-error.js'
import { basicCredentials, checkCredentials } from './credentials.js'
import type { AdminDeps, AdminEnv } from './env.js'
import { type AdminTokenClaims, tokenId, verifyToken } from './jwt.js'
import { API_PREFIX, normalizePath } from './paths.js'
import { checkCsrf, sessionCookieToken } from './session-cookie.js'

/** Routes reachable without a token (docs/admin-api.md#signing-in). */
const PUBLIC_PATHS = new Set([
  `${API_PREFIX}/auth/login`,
  `${API_PREFIX}/openapi.json`,
  // Console sign-in through an identity provider (docs/sso.md#console-sign-in).
  `${API_PREFIX}/auth/sso/providers`,
  `${API_PREFIX}/auth/sso/start`,
  `${API_PREFIX}/auth/sso/callback`,
])
/** The console's sign-in; reading the session (`GET`) needs it (docs/console.md#signing-in). */
const SESSION_PATH = `${API_PREFIX}/auth/session`
/** Routes any valid token may use, admin or not. */
const ANY_USER_PATHS = new Set([`${API_PREFIX}/auth/me`, `${API_PREFIX}/auth/logout`])
/**
 * Where any Palisade user may act with their own username and password (HTTP Basic), since only
 * admins get tokens: filing and following their own access requests (docs/policies.md).
 */
const SELF_SERVICE_PREFIX = `${API_PREFIX}/access-requests`

const BEARER = /^bearer\s+(\S+)\s*$/i

function invalidToken(): ApiError {
  return new ApiError(401, 'invalid_token', 'the token is invalid or expired')
}

/**
 * Resolves the bearer token to a user read fresh from the store (nothing cached), so a deleted,
 * deactivated, demoted or re-passworded admin loses access on the next request, and a token
 * ended by logout is refused on every instance sharing the store.
 */
export async function authenticate(
  store: Store,
  header: string | undefined,
  secret: string,
): Promise<{ user: User; claims: AdminTokenClaims; id: string }> {
  const match = header === undefined ? null : BEARER.exec(header)
  if (!match?.[1]) throw new ApiError(401, 'unauthorized', 'a bearer token is required')
  return authenticateToken(store, match[1], secret)
}

/** As {@link authenticate}, for a token that came without the header (the console's cookie). */
export async function authenticateToken(
  store: Store,
  token: string,
  secret: string,
): Promise<{ user: User; claims: AdminTokenClaims; id: string }> {
  const claims = verifyToken(token, secret)
  if (!claims) throw invalidToken()
  const id = tokenId(token, claims)
  if (await store.tokens.isRevoked(id)) throw invalidToken()
  let user: User
  try {
    user = await store.users.get(claims.sub)
  } catch (error) {
    if (isStoreError(error) && error.status === 404) throw invalidToken()
    throw error
  }
  if (!user.is_active) throw invalidToken()
  const changedAt = Math.floor(Date.parse(user.password_changed_at) / 1000)
  if (claims.iat < changedAt) throw invalidToken()
  return { user, claims, id }
}

/**
 * Step 1 of the docs/admin-api.md#errors check order, before routing: 401 on every `/api/v1` path except
 * login and the OpenAPI document, then 403 unless the user is an admin (except `/auth/me` and
 * the access-request routes, which also take a user's own password).
 */
export function requireAuth(deps: AdminDeps): MiddlewareHandler<AdminEnv> {
  const { store, jwtSecret: secret } = deps
  return async (c, next) => {
    const path = normalizePath(c.req.path)
    if (PUBLIC_PATHS.has(path)) return next()
    if (path === SESSION_PATH && c.req.method === 'POST') return next()
    const header = c.req.header('authorization')
    const basic = basicCredentials(header)
    const selfService = path === SELF_SERVICE_PREFIX || path.startsWith(`${SELF_SERVICE_PREFIX}/`)
    if (basic && selfService) {
      c.set('user', await checkCredentials(deps, c, basic.username, basic.password))
      return next()
    }
    // The console's cookie stands in for a missing header; then writes need its CSRF token.
    const cookie = header === undefined ? sessionCookieToken(c) : undefined
    const { user, claims, id } =
      cookie === undefined
        ? await authenticate(store, header, secret)
        : await authenticateToken(store, cookie, secret)
    if (cookie !== undefined) checkCsrf(c, id, secret)
    if (!user.is_admin && !ANY_USER_PATHS.has(path) && !selfService) {
      throw new ApiError(403, 'admin_required', 'admin access is required')
    }
    c.set('user', user)
    c.set('token', { claims, id, viaCookie: cookie !== undefined })
    return next()
  }
}
