import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/**
 * The TCP peer of an admin request under `@hono/node-server` ('' when served another way, as by
 * `app.request` in tests). Forwarding headers are not trusted: anyone can send them.
 */
export function clientAddress(c: Context): string {
  const env = c.env as { incoming?: IncomingMessage } | undefined
  return env?.incoming?.socket?.remoteAddress ?? ''
}
