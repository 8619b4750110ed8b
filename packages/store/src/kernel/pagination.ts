import { StoreError } from './errors.js'

/** Paging input of list methods (docs/resources.md#paging). */
export interface PageInput {
  page?: number | undefined
  page_size?: number | undefined
  /** Another spelling of `page_size` (audit lists). */
  limit?: number | undefined
}

/** The pagination envelope of top-level lists. */
export interface Page<T> {
  data: T[]
  total: number
  page: number
  page_size: number
}

/** Resolves page and size with the route's default and cap; bad values are a 400. */
export function resolvePage(
  input: PageInput,
  defaults: { size: number; cap: number },
): { page: number; pageSize: number; offset: number } {
  const check = (name: string, value: number | undefined) => {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new StoreError('invalid_parameter', `${name} must be an integer of at least 1`, [
        { field: name, code: 'out_of_range', message: `${name} must be an integer of at least 1` },
      ])
    }
  }
  check('page', input.page)
  check('page_size', input.page_size)
  check('limit', input.limit)
  if (
    input.page_size !== undefined &&
    input.limit !== undefined &&
    input.page_size !== input.limit
  ) {
    throw new StoreError('invalid_parameter', 'page_size and limit differ', [
      { field: 'limit', code: 'invalid_type', message: 'page_size and limit differ' },
    ])
  }
  const page = input.page ?? 1
  const pageSize = Math.min(input.page_size ?? input.limit ?? defaults.size, defaults.cap)
  return { page, pageSize, offset: (page - 1) * pageSize }
}
