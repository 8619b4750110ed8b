import type { LiteralParameters, RewrittenStatement, ScrubbedError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import { type ClientStatements, NO_TYPES } from './client-statements.js'
import type { ConnectionContext } from './connection-context.js'

/** Describe and Execute of the unnamed portal, and Sync: the same bytes every time. */
const DESCRIBE_EXECUTE_SYNC = Buffer.concat([
  serialize.describe({ type: 'P', name: '' }),
  serialize.execute({ portal: '', rows: 0 }),
  serialize.sync(),
])

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
  const name = statements.prepareText(
    parameters ? parameters.sql : statement.sql,
    parameters ? (parameters.types as number[]) : NO_TYPES,
    statement.originalSql,
    onError,
    true,
  )
  const values = parameters?.values as string[] | undefined
  const bind = serialize.bind({ statement: name, ...(values ? { values } : {}) })
  // One request for the four messages: the upstream answers them up to its ReadyForQuery, and
  // an error in any of them skips the rest up to the Sync, so each ends where the Sync's does.
  ctx.relay.send(Buffer.concat([bind, DESCRIBE_EXECUTE_SYNC]), {
    terminals: 'Z',
    hidden: '2Z',
    originalSql: statement.originalSql,
    onDone,
  })
}
