import type { User } from '@palisade/store'
import type { Context } from 'hono'
import { ApiError } from './api-error.js'
import { checkCredentials } from './credentials.js'
import type { AdminDeps, AdminEnv } from './env.js'
import { type AdminTokenClaims, newTokenId, signToken } from './jwt.js'

/** A fresh admin token and what it says. */
export interface SignedIn {
  token: string
  claims: AdminTokenClaims & { jti: string }
  user: User
}

/**
 * Checks an admin's username and password (throttled and audited as every login) and issues a
 * token with its own `jti`: the step shared by API logins and console sessions.
 */
export async function signIn(
  deps: AdminDeps,
  c: Context<AdminEnv>,
  username: string,
  password: string,
): Promise<SignedIn> {
  const checked = await checkCredentials(deps, c, username, password)
  if (!checked.is_admin) throw new ApiError(403, 'admin_required', 'admin access is required')
  return issueAdminToken(deps, checked.id)
}

/**
 * Issues an admin token for a user already checked (by password or through an identity
 * provider) and records the login: the one way every admin session begins.
 */
export async function issueAdminToken(deps: AdminDeps, userId: string): Promise<SignedIn> {
  await deps.store.users.recordLogin(userId)
  const user = await deps.store.users.get(userId)
  const iat = Math.floor(Date.now() / 1000)
  const claims = {
    sub: user.id,
    username: user.username,
    is_admin: true,
    iat,
    exp: iat + deps.tokenTtlSeconds,
    jti: newTokenId(),
  }
  return { token: signToken(claims, deps.jwtSecret), claims, user }
}
