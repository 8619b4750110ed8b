/** One field-level problem, as in docs/admin-api.md#errors `details`. */
export interface ErrorDetail {
  field: string
  code: string
  message: string
}

/** The admin-api error codes the store raises (docs/admin-api.md#errors). */
export type StoreErrorCode =
  | 'invalid_parameter'
  | 'scope_mismatch'
  | 'inactive_role'
  | 'not_found'
  | 'already_exists'
  | 'version_conflict'
  | 'in_use'
  | 'admin_lockout'
  | 'incompatible_values'
  | 'validation_failed'
  | 'invalid_expression'
  | 'compile_failed'
  | 'role_cycle'
  | 'role_depth_exceeded'
  | 'not_pending'
  | 'self_approval'
  | 'request_limit'

const statusOf: Record<StoreErrorCode, number> = {
  invalid_parameter: 400,
  scope_mismatch: 400,
  inactive_role: 400,
  not_found: 404,
  already_exists: 409,
  version_conflict: 409,
  in_use: 409,
  admin_lockout: 409,
  incompatible_values: 409,
  validation_failed: 422,
  invalid_expression: 422,
  compile_failed: 422,
  role_cycle: 422,
  role_depth_exceeded: 422,
  not_pending: 409,
  self_approval: 403,
  request_limit: 409,
}

/**
 * A rejected store operation. `status` and `code` map 1:1 onto the admin API's error body;
 * `message` is lowercase with no final period and never contains SQL or secrets.
 */
export class StoreError extends Error {
  readonly status: number
  readonly code: StoreErrorCode
  readonly details: readonly ErrorDetail[]

  constructor(code: StoreErrorCode, message: string, details: readonly ErrorDetail[] = []) {
    super(message)
    this.name = new.target.name
    this.code = code
    this.status = statusOf[code]
    this.details = details
  }
}

/** 404: a resource named by id or in a relation body is missing. */
export class ResourceNotFoundError extends StoreError {
  constructor(resource: string, field?: string) {
    super(
      'not_found',
      `${resource} not found`,
      field ? [{ field, code: 'not_found', message: `${resource} not found` }] : [],
    )
  }
}

/** 409 already_exists: a unique name, key or tuple is taken. */
export class ResourceConflictError extends StoreError {
  constructor(message: string, field?: string) {
    super('already_exists', message, field ? [{ field, code: 'duplicate', message }] : [])
  }
}

/** 422 validation_failed with every failing field. */
export class ValidationError extends StoreError {
  constructor(details: readonly ErrorDetail[], message = 'request body is invalid') {
    super('validation_failed', message, details)
  }
}

/**
 * A session cannot be built: unknown or inactive user or datasource, or no access scope.
 * Deliberately one type with one message so callers cannot tell the causes apart (docs/pgwire.md#connecting).
 */
export class SessionDeniedError extends StoreError {
  constructor() {
    super('not_found', 'datasource not available')
  }
}

/** Brand check that survives duplicate installs. */
export function isStoreError(value: unknown): value is StoreError {
  return (
    value instanceof StoreError ||
    (value instanceof Error &&
      typeof (value as { status?: unknown }).status === 'number' &&
      typeof (value as { code?: unknown }).code === 'string' &&
      Array.isArray((value as { details?: unknown }).details))
  )
}
