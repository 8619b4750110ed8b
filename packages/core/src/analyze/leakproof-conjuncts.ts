import { type AstNode, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { nodeBody, taggedBody } from '../ast/tag-dispatch.js'

/** A user conjunct that may be copied inside a fenced scan, with the column it reads. */
export interface PushdownCandidate {
  readonly column: string
  readonly node: AstNode
}

/** Built-in comparisons whose implementations for built-in types are leakproof. */
const COMPARISONS = new Set(['=', '<>', '!=', '<', '<=', '>', '>='])

/**
 * Finds the WHERE conjuncts of one SELECT that are provably leakproof (a bare column compared
 * with constants by a built-in comparison, IN or BETWEEN constants, IS [NOT] NULL) and the
 * scan each belongs to. Copying them inside a fenced scan lets indexes serve point queries
 * without letting a user predicate run on rows the row filter excludes (docs/rewrite.md#what-the-derived-table-guarantees).
 * Only scans that are never NULL-extended by an outer join qualify.
 */
export function findPushdownCandidates(
  select: Pg.SelectStmt,
): Map<Pg.RangeVar, PushdownCandidate[]> {
  const out = new Map<Pg.RangeVar, PushdownCandidate[]>()
  if (!select.whereClause) return out
  const scans = new Map<string, Pg.RangeVar>()
  const from = select.fromClause ?? []
  for (const item of from) collectScans(item as AstNode, scans)
  const only =
    from.length === 1 && tagOf(from[0]) === 'RangeVar' ? taggedBody(from[0], 'RangeVar') : undefined
  for (const conjunct of conjunctsOf(select.whereClause as AstNode)) {
    const column = leakproofColumn(conjunct)
    if (!column) continue
    const scan = column.qualifier === undefined ? only : scans.get(column.qualifier)
    if (!scan) continue
    const list = out.get(scan) ?? []
    list.push({ column: column.name, node: conjunct })
    out.set(scan, list)
  }
  return out
}

function conjunctsOf(node: AstNode): AstNode[] {
  const bool = nodeBody(node, 'BoolExpr')
  if (bool?.boolop === 'AND_EXPR')
    return (bool.args ?? []).flatMap((a) => conjunctsOf(a as AstNode))
  return [node]
}

/** Scans in positions an outer join never NULL-extends, by the name queries qualify them with. */
function collectScans(item: AstNode, out: Map<string, Pg.RangeVar>): void {
  const tag = tagOf(item)
  if (tag === 'RangeVar') {
    const rv = taggedBody(item, 'RangeVar')
    out.set(rv.alias?.aliasname ?? rv.relname ?? '', rv)
  } else if (tag === 'JoinExpr') {
    const join = taggedBody(item, 'JoinExpr')
    if (join.jointype === 'JOIN_INNER' || join.jointype === 'JOIN_LEFT')
      collectScans(join.larg as AstNode, out)
    if (join.jointype === 'JOIN_INNER' || join.jointype === 'JOIN_RIGHT')
      collectScans(join.rarg as AstNode, out)
  }
}

function leakproofColumn(
  node: AstNode,
): { qualifier: string | undefined; name: string } | undefined {
  const tag = tagOf(node)
  if (tag === 'NullTest') return columnOf(taggedBody(node, 'NullTest').arg as AstNode)
  if (tag !== 'A_Expr') return undefined
  const expr = taggedBody(node, 'A_Expr')
  const op = stringsOf(expr.name)
  const lexpr = expr.lexpr as AstNode
  const rexpr = expr.rexpr as AstNode
  switch (expr.kind) {
    case 'AEXPR_OP':
      if (op.length !== 1 || !COMPARISONS.has(op[0] as string)) return undefined
      if (isConstant(rexpr)) return columnOf(lexpr)
      if (isConstant(lexpr)) return columnOf(rexpr)
      return undefined
    case 'AEXPR_IN': {
      const items =
        (rexpr as { List?: { items?: AstNode[] } }).List?.items ??
        (Array.isArray(rexpr) ? (rexpr as AstNode[]) : [])
      return items.length > 0 && items.every(isConstant) ? columnOf(lexpr) : undefined
    }
    case 'AEXPR_BETWEEN':
    case 'AEXPR_NOT_BETWEEN': {
      const items = (rexpr as { List?: { items?: AstNode[] } }).List?.items ?? []
      return items.length === 2 && items.every(isConstant) ? columnOf(lexpr) : undefined
    }
    default:
      return undefined
  }
}

function columnOf(
  node: AstNode | undefined,
): { qualifier: string | undefined; name: string } | undefined {
  const ref = nodeBody(node, 'ColumnRef')
  if (!ref) return undefined
  const names = stringsOf(ref.fields)
  if (names.includes('*') || names.length > 2) return undefined
  return names.length === 1
    ? { qualifier: undefined, name: names[0] as string }
    : { qualifier: names[0], name: names[1] as string }
}

const ARITHMETIC = new Set(['+', '-', '*', '/', '%', '||'])
const CLOCK_FUNCTIONS = new Set([
  'now',
  'current_date',
  'current_timestamp',
  'localtimestamp',
  'statement_timestamp',
  'transaction_timestamp',
])
const CLOCK_VALUES = new Set([
  'SVFOP_CURRENT_DATE',
  'SVFOP_CURRENT_TIME',
  'SVFOP_CURRENT_TIME_N',
  'SVFOP_CURRENT_TIMESTAMP',
  'SVFOP_CURRENT_TIMESTAMP_N',
  'SVFOP_LOCALTIME',
  'SVFOP_LOCALTIME_N',
  'SVFOP_LOCALTIMESTAMP',
  'SVFOP_LOCALTIMESTAMP_N',
])

/**
 * A value that cannot depend on any row: literals, parameters, casts of them, arithmetic on
 * them and the statement clock. Never a column, a subquery (its tables would be copied inside
 * the fence unwrapped) or an identity function (the proxy substitutes those above the fence).
 */
function isConstant(node: AstNode | undefined): boolean {
  const tag = tagOf(node)
  switch (tag) {
    case 'A_Const':
    case 'ParamRef':
      return true
    case 'TypeCast':
      return isConstant(taggedBody(node, 'TypeCast').arg as AstNode)
    case 'A_Expr': {
      const expr = taggedBody(node, 'A_Expr')
      const op = stringsOf(expr.name)
      return (
        expr.kind === 'AEXPR_OP' &&
        op.length === 1 &&
        ARITHMETIC.has(op[0] as string) &&
        (expr.lexpr === undefined || isConstant(expr.lexpr as AstNode)) &&
        isConstant(expr.rexpr as AstNode)
      )
    }
    case 'SQLValueFunction':
      return CLOCK_VALUES.has(taggedBody(node, 'SQLValueFunction').op ?? '')
    case 'FuncCall': {
      const call = taggedBody(node, 'FuncCall')
      const names = stringsOf(call.funcname)
      return (
        names.length === 1 &&
        CLOCK_FUNCTIONS.has(names[0] as string) &&
        (call.args?.length ?? 0) === 0
      )
    }
    default:
      return false
  }
}
