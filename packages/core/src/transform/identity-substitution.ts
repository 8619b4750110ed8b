import { type AstNode, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { type TreePass, taggedBody } from '../ast/tag-dispatch.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { catalogFunctionName } from '../virtual-catalog/catalog-guards.js'
import type { TransformContext } from './transform-context.js'

/** Identity functions called with no arguments, named after themselves in the output. */
const IDENTITY_FUNCTIONS = new Set([
  'current_database',
  'current_schema',
  'current_user',
  'session_user',
])

/** Output column names PostgreSQL gives the identity value functions. */
const IDENTITY_LABELS: Partial<Record<NonNullable<Pg.SQLValueFunction['op']>, string>> = {
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_USER: 'current_user',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
}

/** Output column name PostgreSQL gives an identity function, to keep it after substitution. */
function identityLabel(val: AstNode | undefined): string | undefined {
  const tag = tagOf(val)
  if (tag === 'SQLValueFunction') {
    const op = taggedBody(val, 'SQLValueFunction').op
    return op === undefined ? undefined : IDENTITY_LABELS[op]
  }
  if (tag === 'FuncCall') {
    const call = taggedBody(val, 'FuncCall')
    const names = stringsOf(call.funcname)
    const name = names[names.length - 1]
    if ((call.args?.length ?? 0) === 0 && IDENTITY_FUNCTIONS.has(name ?? '')) {
      return name
    }
    if (catalogFunctionName(names) !== undefined) return name
  }
  return undefined
}

/**
 * The Palisade identity in place of the upstream's: `current_user`, `session_user`, `user`,
 * `current_role`, `current_catalog`, `current_schema` and their function forms become the
 * session's values, and a select-list item keeps the output name PostgreSQL would give it.
 */
export function identitySubstitution(ctx: TransformContext): TreePass {
  const { session } = ctx
  return {
    ResTarget: (target) => {
      if (target.name !== undefined) return undefined
      const label = identityLabel(target.val as AstNode | undefined)
      if (label === undefined) return undefined
      // Written out rather than spread: this runs for every identity function in a select list.
      const renamed: Pg.ResTarget = { name: label, val: ctx.map(target.val) as Pg.Node }
      if (target.indirection !== undefined) renamed.indirection = target.indirection
      if (target.location !== undefined) renamed.location = target.location
      return { ResTarget: renamed }
    },
    SQLValueFunction: (fn) => identityValue(session, fn.op),
    FuncCall: (call) => identityCall(session, call),
  }
}

function identityValue(
  session: CompiledSession,
  op: Pg.SQLValueFunction['op'],
): AstNode | undefined {
  switch (op) {
    case 'SVFOP_CURRENT_USER':
    case 'SVFOP_SESSION_USER':
    case 'SVFOP_USER':
    case 'SVFOP_CURRENT_ROLE':
      return session.identity.user
    case 'SVFOP_CURRENT_CATALOG':
      return session.identity.catalog
    case 'SVFOP_CURRENT_SCHEMA':
      return session.identity.schema
    default:
      return undefined
  }
}

function identityCall(session: CompiledSession, call: Pg.FuncCall): AstNode | undefined {
  const names = stringsOf(call.funcname)
  const name = names[names.length - 1]
  if ((call.args?.length ?? 0) > 0) return undefined
  if (name === 'current_database') return session.identity.catalog
  if (name === 'current_schema') return session.identity.schema
  if (name === 'current_user' || name === 'session_user') return session.identity.user
  return undefined
}
