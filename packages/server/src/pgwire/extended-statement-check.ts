import type { RewriteResult, RewrittenStatement } from '@palisade/core'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { objectIdentifierParameter } from './object-identifier-types.js'

/**
 * What the extended protocol accepts of a rewrite, as PostgreSQL does: one statement (none for
 * empty SQL), no DEALLOCATE, no parameters of an object-identifier type. Throws the WireError.
 */
export function extendedStatement(
  result: RewriteResult,
  types: readonly number[],
): RewrittenStatement | undefined {
  const objectType = objectIdentifierParameter(types)
  if (objectType !== undefined) {
    throw WireError.error(
      WireSqlState.FeatureNotSupported,
      `feature not supported: parameters of type ${objectType}`,
    )
  }
  const { statements } = result
  if (statements.length > 1) {
    throw WireError.error(
      WireSqlState.SyntaxError,
      'cannot insert multiple commands into a prepared statement',
    )
  }
  const statement = statements[0]
  if (statement?.kind === 'deallocate') {
    throw WireError.error(
      WireSqlState.FeatureNotSupported,
      'feature not supported: DEALLOCATE in the extended query protocol',
    )
  }
  return statement
}

/** The target of SQL `DEALLOCATE [PREPARE] name | ALL`: a client statement name, or all. */
export function deallocateTarget(
  originalSql: string,
): { all: true } | { all: false; name: string } {
  const match = /^\s*deallocate\s+(?:prepare\s+)?(?:"((?:[^"]|"")*)"|([^\s;]+))/i.exec(originalSql)
  const quoted = match?.[1]
  const bare = match?.[2]
  if (quoted === undefined && bare?.toLowerCase() === 'all') return { all: true }
  return { all: false, name: quoted?.replaceAll('""', '"') ?? bare?.toLowerCase() ?? '' }
}
