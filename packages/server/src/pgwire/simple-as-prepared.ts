import type { LiteralParameters, RewrittenStatement, ScrubbedError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import { type ClientStatements, NO_TYPES } from './client-statements.js'
import type { ConnectionContext } from './connection-context.js'
import type { RowCap } from './row-cap.js'

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
  rows?: RowCap,
): void {
  const name = statements.prepareText(
    parameters ? parameters.sql : statement.sql,
    parameters ? (parameters.types as number[]) : NO_TYPES,
    statement.originalSql,
    onError,
    true,
  )
  // One request for the four messages: the upstream answers them up to its ReadyForQuery, and
  // an error in any of them skips the rest up to the Sync, so each ends where the Sync's does.
  ctx.relay.send(bindDescribeExecuteSync(name, parameters?.values ?? NO_VALUES), {
    terminals: 'Z',
    hidden: '2Z',
    originalSql: statement.originalSql,
    onDone,
    rows,
  })
}

const NO_VALUES: readonly string[] = []

/**
 * Bind of the unnamed portal to statement `name` with text parameters and text results, then
 * Describe, Execute and Sync: one buffer, written field by field (once per statement run).
 * @see https://www.postgresql.org/docs/current/protocol-message-formats.html#PROTOCOL-MESSAGE-FORMATS-BIND
 */
function bindDescribeExecuteSync(name: string, values: readonly (string | null)[]): Buffer {
  // Code, length, portal '', name, no format codes (all text), the count, no result formats.
  let length = 4 + 1 + Buffer.byteLength(name) + 1 + 2 + 2 + 2
  for (const value of values) length += 4 + (value === null ? 0 : Buffer.byteLength(value))
  const out = Buffer.allocUnsafe(1 + length + DESCRIBE_EXECUTE_SYNC.length)
  out[0] = 0x42 // 'B'
  out.writeInt32BE(length, 1)
  out[5] = 0
  let at = 6 + out.write(name, 6, 'utf8')
  out[at++] = 0
  at = out.writeInt16BE(0, at)
  at = out.writeInt16BE(values.length, at)
  for (const value of values) {
    if (value === null) at = out.writeInt32BE(-1, at)
    else {
      const written = out.write(value, at + 4, 'utf8')
      out.writeInt32BE(written, at)
      at += 4 + written
    }
  }
  at = out.writeInt16BE(0, at)
  DESCRIBE_EXECUTE_SYNC.copy(out, at)
  return out
}
