import type { User } from '@palisade/store'
import type { Context } from 'hono'
import { ApiError } from './api-error.js'
import { clientAddress } from './client-address.js'
import type { AdminDeps, AdminEnv } from './env.js'

/**
 * Checks a username and password as the admin login does: throttled first (a throttled guess
 * costs no key derivation), then verified; failures go to the login audit. Unknown user, wrong
 * password and inactive user all answer 401 `invalid_credentials` alike.
 */
export async function checkCredentials(
  deps: AdminDeps,
  c: Context<AdminEnv>,
  username: string,
  password: string,
): Promise<User> {
  const attempt = { plane: 'admin' as const, username, address: clientAddress(c) }
  const decision = deps.logins.check(attempt)
  if (decision.throttled) {
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
    throw new ApiError(
      429,
      'too_many_attempts',
      `too many failed logins; try again in ${seconds} s`,
      [],
      { 'Retry-After': String(seconds) },
    )
  }
  const { user, reason } = await deps.store.users.checkPassword(username, password)
  if (!user) {
    deps.logins.failed(attempt, reason)
    throw new ApiError(401, 'invalid_credentials', 'invalid username or password')
  }
  deps.logins.succeeded(attempt)
  return user
}

const BASIC = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i

/** The username and password of an `Authorization: Basic` header, or null for another scheme. */
export function basicCredentials(
  header: string | undefined,
): { username: string; password: string } | null {
  const match = header === undefined ? null : BASIC.exec(header)
  if (!match?.[1]) return null
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return null
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}
