import { randomUUID } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import type { AdminEnv } from './env.js'

/** 1-128 printable ASCII characters: anything else could smuggle bytes into logs. */
const CLIENT_REQUEST_ID = /^[\x20-\x7e]{1,128}$/

/**
 * Assigns the request id and sets the headers every response carries (docs/admin-api.md#conventions), also on
 * errors: the handler runs first and the headers are applied to whatever response came back.
 */
export function requestHeaders(): MiddlewareHandler<AdminEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id')
    const requestId = given !== undefined && CLIENT_REQUEST_ID.test(given) ? given : randomUUID()
    c.set('requestId', requestId)
    await next()
    c.res.headers.set('X-Request-Id', requestId)
    c.res.headers.set('Cache-Control', 'no-store')
    c.res.headers.set('X-Content-Type-Options', 'nosniff')
  }
}
