import type { RewrittenStatement } from '@palisade/core'
import { type LeaveStatement, LimitError } from '../data-plane/statement-gate.js'
import type { ConnectionContext } from './connection-context.js'
import { RowCap } from './row-cap.js'

/**
 * Admits a statement under the user's rate and concurrency limits
 * (docs/roles-and-access.md#limits): undefined when the user has none (no cost at all), else the
 * function that ends it, or a promise of it when the counts live in the store. Throws the 53400
 * `LimitError`, counted in the metrics. Transaction control is never refused, so a client can
 * always end its transaction. `running`: another statement of the connection is in flight (an
 * extended-protocol batch): this one is counted against the rate only.
 */
export function enterStatement(
  ctx: ConnectionContext,
  statement: RewrittenStatement | undefined,
  running = false,
): LeaveStatement | Promise<LeaveStatement> | undefined {
  let limits = ctx.live.limits
  if (limits === undefined || statement?.kind === 'transaction') return undefined
  // A statement queued behind one of the same connection runs after it, not beside it.
  if (running && limits.maxConcurrentStatements !== undefined) {
    limits = { ...limits, maxConcurrentStatements: undefined }
  }
  if (limits.maxConcurrentStatements === undefined && limits.maxStatementsPerMinute === undefined) {
    return undefined
  }
  try {
    const entered = ctx.gate.enter({ id: ctx.live.userId, limits })
    if (entered instanceof Promise) return entered.catch((error: unknown) => refused(ctx, error))
    return entered
  } catch (error) {
    return refused(ctx, error)
  }
}

function refused(ctx: ConnectionContext, error: unknown): never {
  if (error instanceof LimitError) ctx.observer?.limited?.(ctx.live.datasourceName, error.limit)
  throw error
}

/**
 * The row limit of a statement about to run, or undefined (no limit, or an EXPLAIN). A FETCH
 * reads its cursor's count, so the limit holds across the FETCHes of one DECLARE; a DECLARE
 * starts that count.
 */
export function rowCapOf(
  ctx: ConnectionContext,
  statement: RewrittenStatement | undefined,
): RowCap | undefined {
  const limits = ctx.live.limits
  if (limits?.maxRowsPerStatement === undefined || statement?.explain) return undefined
  const fresh = () => new RowCap(limits.maxRowsPerStatement as number, limits.onRowLimit ?? 'error')
  const cursor = statement?.cursor?.name
  if (cursor === undefined || cursor === null) return fresh()
  if (statement?.kind === 'declare_cursor') {
    const cap = fresh()
    ctx.rowCaps.set(cursor, cap)
    return cap
  }
  if (statement?.kind === 'fetch') {
    let cap = ctx.rowCaps.get(cursor)
    if (!cap) {
      cap = fresh()
      ctx.rowCaps.set(cursor, cap)
    }
    return cap
  }
  if (statement?.kind === 'close_cursor') ctx.rowCaps.delete(cursor)
  return fresh()
}

/**
 * What a statement's audit row says of its row limit: the WARNING's text when it was truncated
 * (status stays `success`); counted in the metrics once per statement.
 */
export function rowCapOutcome(ctx: ConnectionContext, cap: RowCap | undefined): string | null {
  if (!cap?.cut) return null
  if (!cap.counted) {
    cap.counted = true
    ctx.observer?.limited?.(
      ctx.live.datasourceName,
      cap.action === 'error' ? 'rows_error' : 'rows_truncated',
    )
  }
  return cap.action === 'truncate' ? cap.warning : null
}
