import type { ScrubbedError } from '@palisade/core'
import type { RowLimitAction } from '@palisade/store'
import { errorResponse } from '../wire/error-response.js'
import { WireSqlState } from '../wire/wire-error.js'
import { commandComplete } from './backend-messages.js'

/**
 * The row limit of one statement (docs/roles-and-access.md#limits): counts the DataRow messages
 * relayed to the client, across the Executes of one portal and the FETCHes of one cursor. Past
 * the limit, `error` fails the statement with 54000 and `truncate` drops the rows left and ends
 * with a WARNING and the CommandComplete of the rows sent.
 */
export class RowCap {
  readonly limit: number
  readonly action: RowLimitAction
  /** Rows relayed so far. */
  sent = 0
  /** Set once a row past the limit came: dropped (`truncate`) or the statement failed (`error`). */
  cut = false
  /** Set once the cut was counted in the metrics (a portal's Executes share one cap). */
  counted = false

  constructor(limit: number, action: RowLimitAction) {
    this.limit = limit
    this.action = action
  }

  /** Counts a DataRow about to be relayed: false when it must not be (past the limit). */
  admit(): boolean {
    if (this.sent < this.limit) {
      this.sent++
      return true
    }
    this.cut = true
    return false
  }

  /** The 54000 of `error` mode. */
  error(): ScrubbedError {
    return {
      severity: 'ERROR',
      code: WireSqlState.ProgramLimitExceeded,
      message: `statement would return more than ${this.limit} rows (max_rows_per_statement)`,
      detail: `The limit of ${this.limit} rows per statement applies to this user.`,
      hint: 'Narrow the query, add a LIMIT, or read it in smaller pieces.',
    }
  }

  /** What `truncate` mode says, in its WARNING and in the audit row. */
  get warning(): string {
    return `result truncated at ${this.limit} rows (max_rows_per_statement)`
  }

  /**
   * A truncated answer's end: the WARNING, then the CommandComplete with the rows actually sent
   * (`SELECT 1000` becomes `SELECT 10`).
   */
  truncatedEnd(commandCompleteBytes: Uint8Array): Buffer {
    const tag = Buffer.from(commandCompleteBytes.subarray(5, commandCompleteBytes.length - 1))
      .toString('utf8')
      .replace(/\d+$/, String(this.sent))
    const notice = errorResponse(
      {
        severity: 'WARNING',
        code: WARNING,
        message: this.warning,
        detail: `Only the first ${this.limit} rows were sent.`,
      },
      'N',
    )
    return Buffer.concat([notice, commandComplete(tag)])
  }
}

/** SQLSTATE `01000`, warning. */
const WARNING = '01000'
