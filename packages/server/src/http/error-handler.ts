import { isStoreError } from '@palisade/store'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { ApiError, type ApiErrorDetail } from './api-error.js'
import type { AdminEnv } from './env.js'

/** Writes the docs/admin-api.md#errors envelope; `details` only when it has items. */
export function errorResponse(
  c: Context<AdminEnv>,
  status: number,
  code: string,
  message: string,
  details: readonly ApiErrorDetail[] = [],
): Response {
  const error: Record<string, unknown> = { code, message }
  if (details.length > 0) error['details'] = details
  return c.json({ error }, status as ContentfulStatusCode)
}

/**
 * Hono `onError`: API and store errors map 1:1 onto the envelope; anything else is a 500
 * whose message carries only the request id, while the real error goes to the logger.
 */
export function createErrorHandler(logger: (entry: Record<string, unknown>) => void) {
  return (err: Error, c: Context<AdminEnv>): Response => {
    if (err instanceof ApiError) {
      const res = errorResponse(c, err.status, err.code, err.message, err.details)
      for (const [name, value] of Object.entries(err.headers)) res.headers.set(name, value)
      return res
    }
    if (isStoreError(err)) return errorResponse(c, err.status, err.code, err.message, err.details)
    const requestId = c.get('requestId')
    logger({
      level: 'error',
      msg: 'admin api internal error',
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      error: err.message,
      stack: err.stack,
    })
    return errorResponse(c, 500, 'internal_error', `internal error (request id ${requestId})`)
  }
}
