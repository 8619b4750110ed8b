import { PalisadeError } from '../errors.js'
import { SqlState } from '../sqlstate.js'

/** A decision-function source that does not compile or define `evaluate` (admin API 422 `compile_failed`). */
export class DecisionCompileError extends PalisadeError {
  /** 1-based line of a syntax error, when known. */
  readonly line: number | undefined
  /** 1-based column of a syntax error, when known. */
  readonly column: number | undefined

  constructor(message: string, position: { line?: number; column?: number } = {}) {
    const code = position.line === undefined ? SqlState.InvalidParameterValue : SqlState.SyntaxError
    super(code, message)
    this.line = position.line
    this.column = position.column
  }
}
