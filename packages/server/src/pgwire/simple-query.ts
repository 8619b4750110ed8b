import type { RewrittenStatement, ScrubbedError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import type { LeaveStatement } from '../data-plane/statement-gate.js'
import { errorResponse, toWireFields } from '../wire/error-response.js'
import { WireError } from '../wire/wire-error.js'
import { emptyQueryResponse, readyForQuery } from './backend-messages.js'
import type { ClientOutput } from './client-socket.js'
import { type ConnectionContext, quoteLiteral } from './connection-context.js'
import { ExplainAnswer } from './explain-answer.js'
import type { ExtendedProtocol } from './extended-protocol.js'
import { enterStatement, rowCapOf, rowCapOutcome } from './statement-limits.js'

/**
 * Answers a Query refused before anything ran (a rejected statement, or a message that is not
 * valid): an open transaction block fails, as PostgreSQL's does on any error.
 */
export async function refuseQuery(
  ctx: ConnectionContext,
  error: unknown,
  out: ClientOutput,
): Promise<void> {
  await answerRefusal(ctx, error, out)
  out.write(readyForQuery(ctx.relay.status))
}

/**
 * The error of a statement refused before it ran, after the answers still due; an open
 * transaction block fails with it.
 */
async function answerRefusal(ctx: ConnectionContext, error: unknown, out: ClientOutput) {
  ctx.relay.abortTransaction(true)
  await ctx.relay.drainTo(out)
  out.write(errorResponse(toWireFields(error)))
}

/**
 * The simple query protocol. Every statement of the message is rewritten and checked before any
 * runs: if one is rejected, none runs. Statements then run upstream one at a time, so each gets
 * its own audit row and time, and the run stops at the first error as PostgreSQL's does.
 * @see https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-SIMPLE-QUERY
 */
export async function simpleQuery(
  ctx: ConnectionContext,
  extended: ExtendedProtocol,
  sql: string,
  out: ClientOutput,
): Promise<void> {
  const { relay, audit } = ctx
  let started = performance.now()
  const session = ctx.live.fresh ? ctx.live.compiled : await ctx.live.current()
  let statements: readonly RewrittenStatement[]
  try {
    if (sql.trim() === '') statements = []
    else {
      // A long statement is rewritten in a worker: other connections go on meanwhile.
      const rewritten = ctx.rewriter.rewrite(sql, session)
      statements = (rewritten instanceof Promise ? await rewritten : rewritten).statements
    }
  } catch (error) {
    if (error instanceof WireError && error.fatal) throw error
    // Policy/audit stage first: the rejection is audited before the client hears of it.
    audit.rejected(sql, error, performance.now() - started)
    await refuseQuery(ctx, error, out)
    return
  }
  if (statements.length === 0) {
    out.write(emptyQueryResponse())
    out.write(readyForQuery(relay.status))
    return
  }
  let failed = false
  let next = 0
  try {
    for (const statement of statements) {
      next++
      if (failed) {
        notExecuted(ctx, statement)
        continue
      }
      const staleCursor = ctx.cursors.check(statement, ctx.live)
      if (staleCursor) {
        audit.rejected(statement.originalSql, staleCursor, performance.now() - started)
        await answerRefusal(ctx, staleCursor, out)
        failed = true
        continue
      }
      if (statement.kind === 'deallocate') {
        try {
          extended.deallocate(statement.originalSql)
        } catch (error) {
          if (error instanceof WireError && error.fatal) throw error
          audit.rejected(statement.originalSql, error, performance.now() - started)
          await answerRefusal(ctx, error, out)
          failed = true
          continue
        }
      }
      // Rate and concurrency limits: a refused statement never runs upstream.
      let leave: LeaveStatement | undefined
      try {
        const entered = enterStatement(ctx, statement)
        leave = entered instanceof Promise ? await entered : entered
      } catch (error) {
        if (error instanceof WireError && error.fatal) throw error
        audit.rejected(statement.originalSql, error, performance.now() - started)
        await answerRefusal(ctx, error, out)
        failed = true
        continue
      }
      const rows = rowCapOf(ctx, statement)
      // A WITH HOLD cursor outlives the transaction: the client keeps its upstream session.
      if (statement.cursor?.hold) relay.pin()
      let upstreamError: string | undefined
      let answered = statement.kind === 'deallocate'
      const onError = (error: ScrubbedError | undefined) => {
        if (error && upstreamError === undefined) upstreamError = error.message
      }
      const onDone = (error: ScrubbedError | undefined) => {
        answered = true
        onError(error)
      }
      if (!answered && !extended.sendAsPrepared(statement, onError, onDone, rows)) {
        relay.send(serialize.query(upstreamSql(ctx, statement)), {
          terminals: 'Z',
          hidden: 'Z',
          originalSql: statement.originalSql,
          onDone,
          rows,
          ...(statement.explain ? { reshape: new ExplainAnswer(statement.explain) } : {}),
        })
      }
      try {
        await relay.drainTo(out)
      } finally {
        const left = leave?.()
        if (left) await left
        if (!answered) upstreamError = 'the connection ended before the answer was complete'
        const truncated = rowCapOutcome(ctx, rows)
        // Also when the client or the upstream went away mid-answer (the relay then ends the
        // request with an error): every statement that ran has its audit row.
        audit.record({
          originalSql: statement.originalSql,
          rewrittenSql: statement.sql,
          policiesApplied: statement.policiesApplied,
          shadow: statement.shadow,
          template: statement.template,
          elapsedMs: performance.now() - started,
          status: upstreamError === undefined ? 'success' : 'error',
          errorMessage: upstreamError ?? truncated,
        })
      }
      // The client is gone: run nothing more (what was sent is audited as it ends).
      if (out.ended) {
        for (const rest of statements.slice(next)) notExecuted(ctx, rest)
        return
      }
      if (upstreamError !== undefined) failed = true
      else if (statement.setting?.name === 'application_name') {
        audit.clientInfo = statement.setting.value ?? ctx.startupApplicationName
      }
      started = performance.now()
    }
  } catch (error) {
    // The connection ended mid-run: the statements not reached have their audit rows too.
    for (const statement of statements.slice(next)) notExecuted(ctx, statement)
    throw error
  }
  out.write(readyForQuery(relay.status))
}

/** The audit row of a statement a failure before it kept from running. */
function notExecuted(ctx: ConnectionContext, statement: RewrittenStatement): void {
  ctx.audit.record({
    originalSql: statement.originalSql,
    rewrittenSql: statement.sql,
    policiesApplied: statement.policiesApplied,
    shadow: statement.shadow,
    template: statement.template,
    elapsedMs: null,
    status: 'error',
    errorMessage: 'not executed: an earlier statement of the same query failed',
  })
}

/** The SQL sent upstream; `RESET application_name` returns to the client's startup value. */
function upstreamSql(ctx: ConnectionContext, statement: RewrittenStatement): string {
  if (statement.setting?.name === 'application_name' && statement.setting.value === null) {
    return `SET application_name = ${quoteLiteral(ctx.startupApplicationName)}`
  }
  return statement.sql
}
