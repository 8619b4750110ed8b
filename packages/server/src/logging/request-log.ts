import type { Logger } from 'pino'

/** A fetch handler, as Hono's `app.fetch` and `@hono/node-server` use it. */
export type FetchHandler = (request: Request, ...rest: never[]) => Response | Promise<Response>

/**
 * Wraps an admin fetch handler so each request writes one log line: method, path (no query
 * string, which may carry filters), status, duration and the `X-Request-Id` the app answered
 * with. Headers and bodies are never logged, so tokens and passwords stay out.
 */
export function withRequestLog<F extends FetchHandler>(logger: Logger, fetch: F): F {
  const log = logger.child({ plane: 'admin' })
  const wrapped = async (request: Request, ...rest: never[]) => {
    const started = performance.now()
    const path = new URL(request.url).pathname
    try {
      const response = await fetch(request, ...rest)
      log.info({
        event: 'request',
        method: request.method,
        path,
        status: response.status,
        duration_ms: Math.round(performance.now() - started),
        request_id: response.headers.get('x-request-id'),
      })
      return response
    } catch (error) {
      log.error({
        event: 'request',
        method: request.method,
        path,
        status: 500,
        duration_ms: Math.round(performance.now() - started),
      })
      throw error
    }
  }
  return wrapped as F
}
