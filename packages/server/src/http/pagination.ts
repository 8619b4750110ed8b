import * as v from 'valibot'
import { ApiError } from './api-error.js'

/** A query value that must be an integer of at least 1 (docs/resources.md#paging). */
export const pageNumber = v.pipe(
  v.string(),
  v.regex(/^[0-9]+$/, 'must be an integer of at least 1'),
  v.check((s) => Number(s) >= 1, 'must be an integer of at least 1'),
)

/** `page` and `page_size` of every top-level list. */
export const pageQuery = {
  page: v.optional(pageNumber),
  page_size: v.optional(pageNumber),
}

/** Audit lists also accept `limit` for `page_size` (docs/audit.md#reading-the-logs). */
export const auditPageQuery = { ...pageQuery, limit: v.optional(pageNumber) }

/** Converts validated paging strings to the store's numeric input. */
export function toPageInput(query: { page?: string; page_size?: string; limit?: string }): {
  page?: number
  page_size?: number
  limit?: number
} {
  const out: { page?: number; page_size?: number; limit?: number } = {}
  if (query.page !== undefined) out.page = Number(query.page)
  if (query.page_size !== undefined) out.page_size = Number(query.page_size)
  if (query.limit !== undefined) out.limit = Number(query.limit)
  return out
}

/**
 * Two spellings of one parameter must agree (docs/audit.md#reading-the-logs); returns the one given. Checked
 * here as well as in the store so the 400 names the alternate spelling consistently.
 */
export function oneSpelling(
  query: Record<string, string | undefined>,
  canonical: string,
  alternate: string,
): string | undefined {
  const a = query[canonical]
  const b = query[alternate]
  if (a !== undefined && b !== undefined && a !== b) {
    const message = `${alternate} differs from ${canonical}`
    throw new ApiError(400, 'invalid_parameter', message, [
      { field: alternate, code: 'invalid_type', message },
    ])
  }
  return a ?? b
}
