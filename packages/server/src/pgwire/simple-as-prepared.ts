import type { LiteralParameters, RewrittenStatement, ScrubbedError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import { type ClientStatements, NO_TYPES, type Prepared } from './client-statements.js'
import type { ConnectionContext } from './connection-context.js'

const SYNC = serialize.sync()
/** Describe and Execute of the unnamed portal: the same bytes every time. */
const DESCRIBE_PORTAL = serialize.describe({ type: 'P', name: '' })
const EXECUTE_PORTAL = serialize.execute({ portal: '', rows: 0 })

/**
 * Sends a simple-protocol statement as Parse (when the upstream lacks it), Bind, Describe,
 * Execute and Sync of an upstream prepared statement: its literal parameters, when it has them,
 * are bound in text format, as PostgreSQL would read the literals themselves. The answer reads
 * as the plain Query's: the Parse and Bind acknowledgements and the ReadyForQuery are not
 * relayed.
 */
export function runAsPrepared(
  ctx: ConnectionContext,
  statements: ClientStatements,
  statement: RewrittenStatement,
  parameters: LiteralParameters | undefined,
  onError: (error: ScrubbedError) => void,
  onDone: (error: ScrubbedError | undefined) => void,
): void {
  const prepared: Prepared = {
    upstreamName: '',
    originalSql: statement.originalSql,
    statement: parameters ? { ...statement, sql: parameters.sql } : statement,
    types: parameters ? (parameters.types as number[]) : NO_TYPES,
    session: ctx.live.compiled,
  }
  statements.prepareUpstream(prepared, onError, true)
  const { relay } = ctx
  const originalSql = statement.originalSql
  const failed = (error: ScrubbedError | undefined) => {
    if (error) onError(error)
  }
  const values = parameters?.values as string[] | undefined
  relay.send(serialize.bind({ statement: prepared.upstreamName, ...(values ? { values } : {}) }), {
    terminals: '2',
    swallow: true,
    originalSql,
    onDone: failed,
  })
  relay.send(DESCRIBE_PORTAL, {
    terminals: 'Tn',
    originalSql,
    onDone: failed,
  })
  relay.send(EXECUTE_PORTAL, {
    terminals: 'CIs',
    originalSql,
    onDone: failed,
  })
  relay.send(SYNC, { terminals: 'Z', hideReady: true, originalSql, onDone })
}
