import { type AstNode, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { catalogFunctionName } from '../virtual-catalog/catalog-guards.js'

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
export function identityLabel(val: AstNode | undefined): string | undefined {
  const tag = tagOf(val)
  if (tag === 'SQLValueFunction') {
    const op = (val as { SQLValueFunction: Pg.SQLValueFunction }).SQLValueFunction.op
    return op === undefined ? undefined : IDENTITY_LABELS[op]
  }
  if (tag === 'FuncCall') {
    const call = (val as { FuncCall: Pg.FuncCall }).FuncCall
    const names = stringsOf(call.funcname)
    const name = names[names.length - 1]
    if ((call.args?.length ?? 0) === 0 && IDENTITY_FUNCTIONS.has(name ?? '')) {
      return name
    }
    if (catalogFunctionName(names) !== undefined) return name
  }
  return undefined
}
