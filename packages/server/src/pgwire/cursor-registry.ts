import type { RewrittenStatement } from '@palisade/core'
import type { LiveSession } from '../data-plane/live-session.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'

/**
 * Which access rules each of a connection's cursors was opened under. A cursor (SQL `DECLARE`)
 * or a portal (extended protocol Bind) holds a query rewritten for the rules of its time: once
 * an access change rebuilt the session, or while a rebuild is due, reading it would return rows
 * the current rules may hide, so FETCH, MOVE and Execute on it fail instead. CLOSE still works.
 */
export class CursorRegistry {
  readonly #cursors = new Map<string, number>()

  /**
   * Tracks a `DECLARE`, `FETCH`/`MOVE` or `CLOSE` about to run; returns the error to answer
   * instead when it reads a cursor opened under older rules.
   */
  check(statement: RewrittenStatement, live: LiveSession): WireError | undefined {
    const cursor = statement.cursor
    if (!cursor) return undefined
    switch (statement.kind) {
      case 'declare_cursor':
        if (cursor.name !== null) this.#cursors.set(cursor.name, live.generation)
        return undefined
      case 'close_cursor':
        if (cursor.name === null) this.#cursors.clear()
        else this.#cursors.delete(cursor.name)
        return undefined
      case 'fetch': {
        const opened = cursor.name === null ? undefined : this.#cursors.get(cursor.name)
        if (opened === undefined || isCurrent(opened, live)) return undefined
        return staleCursor(`cursor "${cursor.name}"`)
      }
      default:
        return undefined
    }
  }

  /** The error for executing a portal bound under older rules, if it was. */
  checkPortal(name: string, boundAt: number, live: LiveSession): WireError | undefined {
    if (isCurrent(boundAt, live)) return undefined
    return staleCursor(name === '' ? 'the unnamed portal' : `portal "${name}"`)
  }
}

function isCurrent(generation: number, live: LiveSession): boolean {
  return generation === live.generation && live.fresh
}

/** 55000, naming the cursor only (never a policy). */
function staleCursor(what: string): WireError {
  return WireError.error(
    WireSqlState.ObjectNotInPrerequisiteState,
    `${what} was opened before the access rules changed; open it again`,
  )
}
