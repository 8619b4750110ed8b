import type { RewrittenStatement, ScrubbedError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import { type ClientStatements, NO_TYPES, type Prepared } from './client-statements.js'
import type { ConnectionContext } from './connection-context.js'

const SYNC = serialize.sync()

/**
 * Sends a simple-protocol statement as Parse (when the upstream lacks it), Bind, Describe,
 * Execute and Sync of an upstream prepared statement. The answer reads as the plain Query's:
 * the Parse and Bind acknowledgements and the ReadyForQuery are not relayed.
 */
export function runAsPrepared(
  ctx: ConnectionContext,
  statements: ClientStatements,
  statement: RewrittenStatement,
  onError: (error: ScrubbedError) => void,
  onDone: (error: ScrubbedError | undefined) => void,
): void {
  const prepared: Prepared = {
    upstreamName: '',
    originalSql: statement.originalSql,
    statement,
    types: NO_TYPES,
    session: ctx.live.compiled,
  }
  statements.prepareUpstream(prepared, onError, true)
  const { relay } = ctx
  const originalSql = statement.originalSql
  const failed = (error: ScrubbedError | undefined) => {
    if (error) onError(error)
  }
  relay.send(serialize.bind({ statement: prepared.upstreamName }), {
    terminals: '2',
    swallow: true,
    originalSql,
    onDone: failed,
  })
  relay.send(serialize.describe({ type: 'P', name: '' }), {
    terminals: 'Tn',
    originalSql,
    onDone: failed,
  })
  relay.send(serialize.execute({ portal: '', rows: 0 }), {
    terminals: 'CIs',
    originalSql,
    onDone: failed,
  })
  relay.send(SYNC, { terminals: 'Z', hideReady: true, originalSql, onDone })
}
