import { isStoreError } from '@palisade/store'
/** One field-level problem in an error body (docs/admin-api.md#errors). */
export interface ApiErrorDetail {
  field: string
  code: string
  message: string
}

/**
 * An admin-API failure raised by the HTTP layer itself (auth, routing, body parsing); store
 * failures arrive as `StoreError` and are mapped by the error handler the same way.
 */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly details: readonly ApiErrorDetail[]
  /** Extra response headers, such as `Allow` on a 405. */
  readonly headers: Readonly<Record<string, string>>

  constructor(
    status: number,
    code: string,
    message: string,
    details: readonly ApiErrorDetail[] = [],
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
    this.details = details
    this.headers = headers
  }
}

/** 400 invalid_parameter naming one path or query parameter. */
export function invalidParameter(field: string, message: string): ApiError {
  return new ApiError(400, 'invalid_parameter', `${field} ${message}`, [
    { field, code: 'invalid_type', message: `${field} ${message}` },
  ])
}

/**
 * Runs one step of a request made of many (a bundle, a proposed change): a store error it
 * raises comes back with its message and field paths under `where`, e.g. `policies[x].name`.
 */
export async function storeStepAt<T>(where: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (!isStoreError(error)) throw error
    const details = (error.details ?? []).map((d) => ({ ...d, field: `${where}.${d.field}` }))
    throw new ApiError(error.status, error.code, `${where}: ${error.message}`, details)
  }
}
