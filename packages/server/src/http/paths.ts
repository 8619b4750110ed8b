/** Base path of every admin route except `/health` (docs/admin-api.md#conventions). */
export const API_PREFIX = '/api/v1'

/** Drops trailing slashes, which the admin API ignores (docs/admin-api.md#conventions). */
export function normalizePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '')
  return trimmed === '' ? '/' : trimmed
}

/** `/users/{id}` (OpenAPI) to `/users/:id` (Hono). */
export function toHonoPath(path: string): string {
  return path.replace(/\{([A-Za-z_]+)\}/g, ':$1')
}
