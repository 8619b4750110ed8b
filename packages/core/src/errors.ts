import { SqlState } from './sqlstate.js'

/** How a failed statement is recorded in the query audit (docs/audit.md#query-audit). */
export type AuditStatus = 'denied' | 'error'

export interface PalisadeErrorOptions {
  detail?: string
  hint?: string
  severity?: 'ERROR' | 'FATAL'
  auditStatus?: AuditStatus
  /** Text for the audit `error_message` when it should say more than `message` (never a policy name). */
  auditMessage?: string
  cause?: unknown
}

/**
 * An error with a PostgreSQL SQLSTATE; the data plane turns it into an ErrorResponse,
 * the admin API into a JSON error. Messages follow PostgreSQL style and never name a policy.
 */
export class PalisadeError extends Error {
  readonly code: SqlState
  readonly severity: 'ERROR' | 'FATAL'
  readonly detail: string | undefined
  readonly hint: string | undefined
  readonly auditStatus: AuditStatus
  readonly auditMessage: string

  constructor(code: SqlState, message: string, options: PalisadeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.severity = options.severity ?? 'ERROR'
    this.detail = options.detail
    this.hint = options.hint
    this.auditStatus = options.auditStatus ?? 'error'
    this.auditMessage = options.auditMessage ?? message
  }
}

/** Brand check that survives duplicate installs of this package. */
export function isPalisadeError(value: unknown): value is PalisadeError {
  return (
    value instanceof PalisadeError ||
    (value instanceof Error &&
      typeof (value as { code?: unknown }).code === 'string' &&
      typeof (value as { auditStatus?: unknown }).auditStatus === 'string')
  )
}

/** A statement outside the read-only allowlist (docs/statements.md); audited `denied`. */
export class ReadOnlyViolationError extends PalisadeError {
  constructor() {
    super(SqlState.ReadOnlySqlTransaction, 'Only read-only queries are allowed', {
      auditStatus: 'denied',
    })
  }
}

/** Every selected column was removed by `column_deny` (docs/errors.md); audited `denied`. */
export class PolicyDeniedError extends PalisadeError {
  constructor(message: string, options: PalisadeErrorOptions = {}) {
    super(SqlState.InsufficientPrivilege, message, { auditStatus: 'denied', ...options })
  }
}

/** A construct the rewriter cannot enforce: fail closed with 0A000. */
export class UnsupportedStatementError extends PalisadeError {
  constructor(construct: string) {
    super(SqlState.FeatureNotSupported, `feature not supported: ${construct}`)
  }
}

/** Malformed SQL, with the parser's own message. */
export class SqlParseError extends PalisadeError {
  readonly position: number | undefined
  constructor(message: string, position?: number, code: SqlState = SqlState.SyntaxError) {
    super(code, message)
    this.position = position
  }
}

/** A hidden or missing table: identical wording for both (404-not-403). */
export class UndefinedTableError extends PalisadeError {
  constructor(name: string) {
    super(SqlState.UndefinedTable, `relation "${name}" does not exist`)
  }
}

/** A function outside the allowlist, worded like a missing function. */
export class UndefinedFunctionError extends PalisadeError {
  constructor(signature: string) {
    super(SqlState.UndefinedFunction, `function ${signature} does not exist`, {
      hint: 'No function matches the given name and argument types. You might need to add explicit type casts.',
    })
  }
}

/**
 * Access rules cannot be applied (undefined template key, unresolvable filter column).
 * The client sees a fixed message; the audit gets the cause, which never names the policy.
 */
export class AccessRulesError extends PalisadeError {
  constructor(cause: string) {
    super(SqlState.InternalError, 'access rules could not be applied', { auditMessage: cause })
  }
}

/** A filter or mask expression that fails validation (admin API 422). */
export class ExpressionError extends PalisadeError {
  constructor(message: string) {
    super(SqlState.SyntaxError, message)
  }
}

/**
 * A statement nested deeper than the rewriting thread's stack allows: PostgreSQL's answer to one
 * nested deeper than its `max_stack_depth`.
 */
export class StackDepthError extends PalisadeError {
  constructor() {
    super(SqlState.StatementTooComplex, 'stack depth limit exceeded', {
      hint: 'Simplify the statement: it nests too deeply.',
    })
  }
}

/** Whether `error` is V8's stack overflow (a `RangeError`, which nothing else here throws). */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && error.message.includes('call stack')
}

/** `error` itself, or a `StackDepthError` in place of a stack overflow. */
export function withStackDepth(error: unknown): unknown {
  return isStackOverflow(error) ? new StackDepthError() : error
}
