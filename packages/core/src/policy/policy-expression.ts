import { walkTree } from '../ast/map-tree.js'
import { type AstNode, bodyOf, type Pg, stringsOf } from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import { BoundedCache } from '../bounded-cache.js'
import { ExpressionError, isPalisadeError } from '../errors.js'
import { isAllowedFunction, isAllowedOperator, REG_TYPES } from './function-allowlist.js'
import { AGGREGATE_FUNCTIONS, SET_RETURNING_FUNCTIONS } from './function-kinds.js'
import { checkMaskCall, maskCallsOf } from './mask-library.js'
import { replaceTemplates } from './template-placeholders.js'
import { isAllowedType } from './type-allowlist.js'

/** A filter or mask expression parsed once and shared by every session that uses it. */
export interface PolicyExpression {
  readonly text: string
  /** The expression tree; `$n` parameters stand for `variables[n - 1]`. */
  readonly node: AstNode
  /** Template keys used, in order of first use. */
  readonly variables: readonly string[]
  /** Unqualified column names referenced. */
  readonly columns: readonly string[]
  /** Library masks called (`mask.partial` → `partial`); only mask expressions may have any. */
  readonly masks: readonly string[]
}

export const MAX_EXPRESSION_LENGTH = 10_000

const cache = new BoundedCache<string, PolicyExpression>(1000)

/**
 * Parses a filter or mask expression with the query-time parser (docs/policies.md#expressions) and checks it
 * against the expression rules of docs/resources.md#policies. Throws `ExpressionError` with a clear message.
 */
export function parsePolicyExpression(text: string): PolicyExpression {
  const hit = cache.get(text)
  if (hit) return hit
  if (text.trim().length === 0) throw new ExpressionError('expression is empty')
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(`expression is longer than ${MAX_EXPRESSION_LENGTH} characters`)
  }
  const { text: substituted, keys } = replaceTemplates(text)
  let statements: ReturnType<typeof parseSql>
  try {
    statements = parseSql(`SELECT 1 FROM _palisade_expression WHERE ${substituted}`)
  } catch (error) {
    throw new ExpressionError(isPalisadeError(error) ? error.message : 'expression does not parse')
  }
  const select =
    statements.length === 1 ? bodyOf<Pg.SelectStmt>(statements[0]?.stmt, 'SelectStmt') : undefined
  if (
    !select?.whereClause ||
    select.groupClause ||
    select.havingClause ||
    select.sortClause ||
    select.limitCount ||
    select.limitOffset ||
    select.lockingClause ||
    select.windowClause ||
    select.op !== 'SETOP_NONE' ||
    (select.fromClause?.length ?? 0) !== 1
  ) {
    throw new ExpressionError('expression must be a single SQL value expression')
  }
  const node = select.whereClause as AstNode
  const columns = checkExpression(node, keys.length)
  const parsed: PolicyExpression = Object.freeze({
    text,
    node,
    variables: keys,
    columns,
    masks: maskCallsOf(node),
  })
  cache.set(text, parsed)
  return parsed
}

/** Walks the expression, enforcing what may appear in it; returns the columns it reads. */
function checkExpression(node: AstNode, parameterCount: number): string[] {
  const columns = new Set<string>()
  walkTree(node, (tag, body) => {
    switch (tag) {
      case 'ColumnRef': {
        const names = stringsOf((body as Pg.ColumnRef).fields)
        if (names.length !== 1 || names[0] === '*') {
          throw new ExpressionError(
            'column references in policy expressions must be unqualified column names',
          )
        }
        columns.add(names[0] as string)
        return false
      }
      case 'ParamRef':
        if (((body as Pg.ParamRef).number ?? 0) > parameterCount) {
          throw new ExpressionError('parameters ($n) are not allowed in policy expressions')
        }
        return false
      case 'SubLink':
        throw new ExpressionError('subqueries are not allowed in policy expressions')
      case 'FuncCall':
        checkFunction(body as Pg.FuncCall)
        return true
      case 'A_Expr':
        checkOperator(body as Pg.A_Expr)
        return true
      case 'TypeCast': {
        const typeNames = stringsOf((body as Pg.TypeCast).typeName?.names)
        if (REG_TYPES.has(typeNames[typeNames.length - 1] ?? '')) {
          throw new ExpressionError(
            'casts to object identifier types are not allowed in policy expressions',
          )
        }
        if (!isAllowedType(typeNames)) {
          throw new ExpressionError(`type "${typeNames.join('.')}" is not a built-in type`)
        }
        return true
      }
      case 'GroupingFunc':
      case 'RangeSubselect':
      case 'RangeVar':
      case 'SetToDefault':
      case 'XmlExpr':
      case 'XmlSerialize':
      case 'JsonFuncExpr':
      case 'JsonTable':
        throw new ExpressionError(`${describe(tag)} is not allowed in policy expressions`)
      default:
        return true
    }
  })
  return [...columns]
}

function checkFunction(call: Pg.FuncCall): void {
  if (checkMaskCall(call)) return
  const names = stringsOf(call.funcname)
  const name = names[names.length - 1] ?? ''
  if (call.funcformat === 'COERCE_SQL_SYNTAX' && (name === 'extract' || name === 'date_part')) {
    throw new ExpressionError('EXTRACT is not supported in policy expressions; use date_part(...)')
  }
  if (
    call.funcformat === 'COERCE_SQL_SYNTAX' &&
    (name === 'substring' || name === 'similar_to_escape')
  ) {
    throw new ExpressionError(
      'SUBSTRING ... FROM ... FOR and SIMILAR are not supported; use substr(...)',
    )
  }
  if (call.over) throw new ExpressionError('window functions are not allowed in policy expressions')
  if (
    call.agg_star ||
    call.agg_distinct ||
    call.agg_filter ||
    call.agg_order ||
    AGGREGATE_FUNCTIONS.has(name)
  ) {
    throw new ExpressionError('aggregate functions are not allowed in policy expressions')
  }
  if (SET_RETURNING_FUNCTIONS.has(name)) {
    throw new ExpressionError('set-returning functions are not allowed in policy expressions')
  }
  if (!isAllowedFunction(names)) {
    throw new ExpressionError(`function ${names.join('.')} is not allowed in policy expressions`)
  }
}

function checkOperator(expr: Pg.A_Expr): void {
  if (expr.kind === 'AEXPR_SIMILAR') {
    throw new ExpressionError('SIMILAR TO is not supported in policy expressions')
  }
  if (expr.kind === 'AEXPR_OP' || expr.kind === 'AEXPR_OP_ANY' || expr.kind === 'AEXPR_OP_ALL') {
    const names = stringsOf(expr.name)
    if (!isAllowedOperator(names)) {
      throw new ExpressionError(`operator ${names.join('.')} is not allowed in policy expressions`)
    }
  }
}

function describe(tag: string): string {
  return tag.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()
}
