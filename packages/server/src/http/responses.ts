import type { Context } from 'hono'
import type { AdminEnv } from './env.js'
import { API_PREFIX } from './paths.js'

/** 201 with the created object and its `Location` (docs/admin-api.md#conventions). */
export function created(c: Context<AdminEnv>, path: string, body: unknown): Response {
  c.header('Location', `${API_PREFIX}${path}`)
  return c.json(body as object, 201)
}

/** 204 with an empty body. */
export function noContent(c: Context<AdminEnv>): Response {
  return c.body(null, 204)
}
