import { timingSafeEqual } from 'node:crypto'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { AdminEnv } from './env.js'
import { API_PREFIX } from './paths.js'

/**
 * The browser's half of a console sign-in through a provider (docs/sso.md#console-sign-in): the
 * `state` of the sign-in it started, in a cookie its scripts cannot read, sent only to the
 * callback. A callback whose state is not the cookie's is refused, so nobody can finish their
 * own sign-in in someone else's browser (login CSRF).
 */
const STATE_COOKIE = 'palisade_sso_state'
const STATE_PATH = `${API_PREFIX}/auth/sso`

function options(c: Context<AdminEnv>) {
  return {
    path: STATE_PATH,
    httpOnly: true,
    sameSite: 'Strict' as const,
    secure: new URL(c.req.url).protocol === 'https:',
  }
}

/** Binds a sign-in's state to this browser for `maxAgeSeconds`. */
export function setStateCookie(c: Context<AdminEnv>, state: string, maxAgeSeconds: number): void {
  setCookie(c, STATE_COOKIE, state, { ...options(c), maxAge: maxAgeSeconds })
}

/** Whether the browser's state cookie is `state`; the cookie is cleared either way. */
export function takeStateCookie(c: Context<AdminEnv>, state: string): boolean {
  const cookie = Buffer.from(getCookie(c, STATE_COOKIE) ?? '')
  deleteCookie(c, STATE_COOKIE, options(c))
  const given = Buffer.from(state)
  return cookie.length > 0 && cookie.length === given.length && timingSafeEqual(cookie, given)
}
