import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { CookieOptions } from 'hono/utils/cookie'
import { ApiError } from './api-error.js'
import type { AdminDeps, AdminEnv } from './env.js'
import { API_PREFIX } from './paths.js'
import type { SignedIn } from './sign-in.js'

/**
 * The web console's session (docs/console.md#signing-in): the admin token in a cookie that the
 * page's scripts cannot read, sent by the browser to `/api/v1` only, never on a cross-site
 * request. Requests that change something must also carry the session's CSRF token in a header.
 */
export const SESSION_COOKIE = 'palisade_session'

/** The header that carries the CSRF token; a custom header also forces a CORS preflight. */
export const CSRF_HEADER = 'X-CSRF-Token'

/** Methods that change nothing, so a cookie alone may authenticate them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function cookieOptions(c: Context<AdminEnv>): CookieOptions {
  return {
    path: API_PREFIX,
    httpOnly: true,
    sameSite: 'Strict',
    // Only this listener's own TLS counts: forwarding headers are not trusted (client-address.ts).
    secure: new URL(c.req.url).protocol === 'https:',
  }
}

/** The session cookie's token, when the request carries one. */
export function sessionCookieToken(c: Context<AdminEnv>): string | undefined {
  return getCookie(c, SESSION_COOKIE) || undefined
}

/** Sets the session cookie to live as long as its token. */
export function setSessionCookie(c: Context<AdminEnv>, token: string, maxAgeSeconds: number): void {
  setCookie(c, SESSION_COOKIE, token, { ...cookieOptions(c), maxAge: maxAgeSeconds })
}

/** Tells the browser to drop the session cookie. */
export function clearSessionCookie(c: Context<AdminEnv>): void {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c))
}

/**
 * The CSRF token of one session: a MAC of its token id, so every instance sharing the JWT secret
 * can check it without storing it, and it ends with the token.
 */
export function csrfToken(tokenId: string, secret: string): string {
  return createHmac('sha256', secret).update(`csrf:${tokenId}`).digest('base64url')
}

/** 403 csrf_failed unless a state-changing request carries its session's CSRF token. */
export function checkCsrf(c: Context<AdminEnv>, tokenId: string, secret: string): void {
  if (SAFE_METHODS.has(c.req.method)) return
  const given = Buffer.from(c.req.header(CSRF_HEADER) ?? '')
  const expected = Buffer.from(csrfToken(tokenId, secret))
  if (given.length === expected.length && timingSafeEqual(given, expected)) return
  throw new ApiError(
    403,
    'csrf_failed',
    `a request authenticated by the session cookie needs its ${CSRF_HEADER} header`,
  )
}

/**
 * Answers a new console session: the token in the cookie, the CSRF token and the user in the
 * body (`POST /auth/session` and the identity provider's callback alike).
 */
export function startSession(c: Context<AdminEnv>, deps: AdminDeps, signedIn: SignedIn): Response {
  const { token, claims, user } = signedIn
  setSessionCookie(c, token, claims.exp - claims.iat)
  return c.json({
    csrf_token: csrfToken(claims.jti, deps.jwtSecret),
    expires_at: new Date(claims.exp * 1000).toISOString(),
    user,
  })
}
