import { type AstNode, type Pg, stringConst, stringsOf, tagOf } from '../ast/node.js'
import { nodeBody, taggedBody } from '../ast/tag-dispatch.js'
import { isCatalogKey } from '../virtual-catalog/pg-catalog-templates.js'

/** A user conjunct that may be copied inside a fenced scan, with the column it reads. */
export interface PushdownCandidate {
  readonly column: string
  readonly node: AstNode
  /**
   * Implied rather than written: `a.x = b.y AND a.x = 5` gives `b.y = 5`. Only the virtual
   * catalog takes these (a catalog statement joins by OID from one pinned relation).
   */
  readonly derived?: boolean
  /**
   * `column = outer.column`, where `outer` names a relation of an enclosing query (a correlated
   * subquery's key): the outer reference, as written. Only the virtual catalog takes these,
   * with the reference cast to the key column's type (catalog-guard-pass.ts).
   */
  readonly outer?: Pg.ColumnRef
  /**
   * With `outer`: the reference names a relation on the left of this scan's join (`… LEFT JOIN
   * pg_class tc ON tc.oid = c.reltoastrelid`), so a fence that takes it is a LATERAL subquery.
   */
  readonly lateral?: boolean
  /**
   * `a.x = b.y` where `b.z = <literal>` is a candidate of another scan `b`: `x` is one of the
   * values of `y` in `b`'s relation where `z` is that literal (the catalog takes this as `x IN
   * (SELECT y FROM <relation> WHERE z = <literal>)` when `b` is a catalog relation keyed by `z`).
   */
  readonly through?: {
    readonly relation: Pg.RangeVar
    readonly column: string
    readonly key: string
    readonly literal: AstNode
  }
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
  for (const item of select.fromClause ?? []) joinKeyEqualities(item as AstNode, out)
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
  for (const conjunct of conjunctsOf(select.whereClause as AstNode)) {
    const equality = likeAsEquality(conjunct)
    const scan =
      equality && (equality.qualifier === undefined ? only : scans.get(equality.qualifier))
    if (!equality || !scan) continue
    const list = out.get(scan) ?? []
    list.push({ column: equality.name, node: equality.node, derived: true })
    out.set(scan, list)
  }
  deriveEqualities(select.whereClause as AstNode, scans, only, out)
  deriveThrough(select.whereClause as AstNode, scans, out)
  correlatedEqualities(select, scans, out)
  listKeyEqualities(from, select.whereClause as AstNode, out)
  return out
}

/**
 * The equality a pattern match implies when its pattern matches one text only: `column LIKE
 * 'text'` without wildcard or escape (drivers write `relname LIKE 't05000'` for one table),
 * or `column ~ '^(name)$'` over word characters (psql's `\d schema.table`). It holds for
 * every row the match does; the match itself is not leakproof, the equality is.
 */
function likeAsEquality(
  node: AstNode,
): { qualifier: string | undefined; name: string; node: AstNode } | undefined {
  const expr = nodeBody(node, 'A_Expr')
  const column = columnOf(expr?.lexpr as AstNode)
  if (!expr || !column) return undefined
  const operator = stringsOf(expr.name)
  let text: string | undefined
  if (expr.kind === 'AEXPR_LIKE' && operator.join() === '~~') {
    const pattern = nodeBody(expr.rexpr as AstNode, 'A_Const')?.sval?.sval
    if (pattern !== undefined && !/[%_\\]/.test(pattern)) text = pattern
  } else if (
    expr.kind === 'AEXPR_OP' &&
    operator.at(-1) === '~' &&
    (operator.length === 1 || operator[0] === 'pg_catalog')
  ) {
    const operand = nodeBody(expr.rexpr as AstNode, 'CollateClause')?.arg ?? expr.rexpr
    const pattern = nodeBody(operand as AstNode, 'A_Const')?.sval?.sval
    const match = pattern?.match(/^\^(?:\((\w+)\)|(\w+))\$$/)
    text = match?.[1] ?? match?.[2]
  }
  if (text === undefined) return undefined
  return { ...column, node: equalityNode(expr.lexpr as AstNode, stringConst(text)) }
}

/** `left = right` with the operator as the user's statement would resolve it. */
function equalityNode(left: AstNode, right: AstNode): AstNode {
  return {
    A_Expr: { kind: 'AEXPR_OP', name: [{ String: { sval: '=' } }], lexpr: left, rexpr: right },
  } as AstNode
}

/**
 * `a.x = o.y` where `a` is a scan of this SELECT and `o` names nothing in its FROM (so an
 * enclosing query's relation): the candidate `x = o.y` for `a`, with `o.y` kept as written.
 * Skipped when the FROM holds an item whose names cannot be listed.
 */
function correlatedEqualities(
  select: Pg.SelectStmt,
  scans: ReadonlyMap<string, Pg.RangeVar>,
  out: Map<Pg.RangeVar, PushdownCandidate[]>,
): void {
  const local = fromClauseNames(select.fromClause ?? [])
  if (!local) return
  for (const { conjunct, column, outer, theirs } of columnEqualities(
    select.whereClause as AstNode,
  )) {
    if (!column.qualifier || !outer.qualifier || local.has(outer.qualifier)) continue
    const scan = scans.get(column.qualifier)
    if (!scan) continue
    const list = out.get(scan) ?? []
    list.push({ column: column.name, node: conjunct, outer: taggedBody(theirs, 'ColumnRef') })
    out.set(scan, list)
  }
}

/** Each `x = y` conjunct of `condition` between two columns, once each way round. */
function* columnEqualities(condition: AstNode): Generator<{
  conjunct: AstNode
  column: { qualifier: string | undefined; name: string }
  outer: { qualifier: string | undefined; name: string }
  mine: AstNode
  theirs: AstNode
}> {
  for (const conjunct of conjunctsOf(condition)) {
    const expr = nodeBody(conjunct, 'A_Expr')
    if (expr?.kind !== 'AEXPR_OP' || stringsOf(expr.name).join() !== '=') continue
    const left = expr.lexpr as AstNode
    const right = expr.rexpr as AstNode
    for (const [mine, theirs] of [
      [left, right],
      [right, left],
    ] as const) {
      const column = columnOf(mine)
      const outer = columnOf(theirs)
      if (column && outer) yield { conjunct, column, outer, mine, theirs }
    }
  }
}

/**
 * `b.x = a.y` in the WHERE, `b` a relation of the FROM list and `a` bound by an item before it:
 * the candidate `x = a.y` for `b`, lateral (as for a join's ON keys below; the WHERE keeps only
 * rows where it holds).
 */
function listKeyEqualities(
  from: readonly unknown[],
  where: AstNode,
  out: Map<Pg.RangeVar, PushdownCandidate[]>,
): void {
  from.forEach((item, index) => {
    const scan = nodeBody(item as AstNode, 'RangeVar')
    const before = scan && fromClauseNames(from.slice(0, index))
    if (before) keyEqualities(scan, where, before, out)
  })
}

/**
 * `b.x = a.y` in the ON of `… [LEFT] JOIN b ON …`, `a` bound on the join's left side: the
 * candidate `x = a.y` for `b`, lateral. An ON condition decides only which of `b`'s rows
 * join, so a fence of `b` that keeps just the rows it accepts changes no result; a catalog
 * relation's fence then looks up the left row's objects instead of computing every visible one.
 */
function joinKeyEqualities(item: AstNode, out: Map<Pg.RangeVar, PushdownCandidate[]>): void {
  const join = nodeBody(item, 'JoinExpr')
  if (!join) return
  joinKeyEqualities(join.larg as AstNode, out)
  joinKeyEqualities(join.rarg as AstNode, out)
  const scan = nodeBody(join.rarg as AstNode, 'RangeVar')
  if (!scan || !join.quals || (join.jointype !== 'JOIN_INNER' && join.jointype !== 'JOIN_LEFT'))
    return
  const left = fromClauseNames([join.larg])
  if (left) keyEqualities(scan, join.quals as AstNode, left, out)
}

/** Lateral candidates for `scan` from `condition`'s conjuncts `scan.x = a.y`, `a` in `left`. */
function keyEqualities(
  scan: Pg.RangeVar,
  condition: AstNode,
  left: ReadonlySet<string>,
  out: Map<Pg.RangeVar, PushdownCandidate[]>,
): void {
  const name = scan.alias?.aliasname ?? scan.relname
  if (!name || left.has(name)) return
  // A bare key column of a catalog relation is that relation's (the catalogs prefix their
  // columns: `conrelid` is pg_constraint's), or the statement fails as ambiguous.
  const catalog = scan.schemaname === undefined || scan.schemaname === 'pg_catalog'
  const mineOf = (column: { qualifier: string | undefined; name: string }) =>
    column.qualifier === name ||
    (column.qualifier === undefined && catalog && isCatalogKey(scan.relname ?? '', column.name))
  for (const { conjunct, column, outer, theirs } of columnEqualities(condition)) {
    if (!mineOf(column) || !outer.qualifier || !left.has(outer.qualifier)) continue
    const list = out.get(scan) ?? []
    list.push({
      column: column.name,
      node: conjunct,
      outer: taggedBody(theirs, 'ColumnRef'),
      lateral: true,
    })
    out.set(scan, list)
  }
}

/** The names a FROM clause binds at its level, or undefined when an item cannot be read. */
export function fromClauseNames(from: readonly unknown[]): Set<string> | undefined {
  const names = new Set<string>()
  for (const item of from) if (!collectNames(item as AstNode, names)) return undefined
  return names
}

/** Adds the names a FROM item binds at its level; false for an item it cannot read. */
function collectNames(item: AstNode, names: Set<string>): boolean {
  const tag = tagOf(item)
  if (tag === 'RangeVar') {
    const rv = taggedBody(item, 'RangeVar')
    names.add(rv.alias?.aliasname ?? rv.relname ?? '')
    return true
  }
  if (tag === 'JoinExpr') {
    const join = taggedBody(item, 'JoinExpr')
    if (join.alias?.aliasname) names.add(join.alias.aliasname)
    return collectNames(join.larg as AstNode, names) && collectNames(join.rarg as AstNode, names)
  }
  const body = (item as Record<string, { alias?: Pg.Alias } | undefined>)[tag ?? '']
  if (
    (tag === 'RangeSubselect' || tag === 'RangeFunction' || tag === 'RangeTableFunc') &&
    body?.alias?.aliasname
  ) {
    names.add(body.alias.aliasname)
    return true
  }
  return false
}

/**
 * For each written `a.x = b.y` where `a.x = <literal>` is a candidate, the candidate `b.y =
 * <literal>` (and the other way round): implied by the statement, so copying it inside a fence
 * changes no result. Literals only, never a cast or an expression.
 */
function deriveEqualities(
  where: AstNode,
  scans: ReadonlyMap<string, Pg.RangeVar>,
  only: Pg.RangeVar | undefined,
  out: Map<Pg.RangeVar, PushdownCandidate[]>,
): void {
  const scanOf = (c: { qualifier: string | undefined }) =>
    c.qualifier === undefined ? only : scans.get(c.qualifier)
  const keys = literalKeys(out)
  if (keys.size === 0) return
  for (const { column: to, outer: from, mine } of columnEqualities(where)) {
    const fromScan = scanOf(from)
    const toScan = scanOf(to)
    if (!fromScan || !toScan || fromScan === toScan) continue
    const literal = keys.get(fromScan)?.find((key) => key.column === from.name)?.literal
    if (!literal) continue
    const list = out.get(toScan) ?? []
    list.push({ column: to.name, node: equalityNode(mine, literal), derived: true })
    out.set(toScan, list)
  }
}

/** Each scan's candidates `column = <literal>`, with the literal. */
function literalKeys(
  out: ReadonlyMap<Pg.RangeVar, readonly PushdownCandidate[]>,
): Map<Pg.RangeVar, { column: string; literal: AstNode }[]> {
  const keys = new Map<Pg.RangeVar, { column: string; literal: AstNode }[]>()
  for (const [scan, list] of out) {
    for (const candidate of list) {
      const literal = !candidate.outer && equalityLiteral(candidate.node)
      if (literal)
        keys.set(scan, [...(keys.get(scan) ?? []), { column: candidate.column, literal }])
    }
  }
  return keys
}

/**
 * For each written `a.x = b.y` where `b.z = <literal>` is a candidate (z another column): the
 * candidate `through` for `a` (see PushdownCandidate). Qualified columns only.
 */
function deriveThrough(
  where: AstNode,
  scans: ReadonlyMap<string, Pg.RangeVar>,
  out: Map<Pg.RangeVar, PushdownCandidate[]>,
): void {
  const keys = literalKeys(out)
  if (keys.size === 0) return
  for (const { conjunct, column: to, outer: from } of columnEqualities(where)) {
    const toScan = to.qualifier === undefined ? undefined : scans.get(to.qualifier)
    const fromScan = from.qualifier === undefined ? undefined : scans.get(from.qualifier)
    if (!toScan || !fromScan || toScan === fromScan) continue
    for (const key of keys.get(fromScan) ?? []) {
      if (key.column === from.name) continue
      const through = {
        relation: fromScan,
        column: from.name,
        key: key.column,
        literal: key.literal,
      }
      const list = out.get(toScan) ?? []
      list.push({ column: to.name, node: conjunct, derived: true, through })
      out.set(toScan, list)
    }
  }
}

/** The literal of `column = 'literal'` (either side), or undefined. */
function equalityLiteral(node: AstNode): AstNode | undefined {
  const expr = nodeBody(node, 'A_Expr')
  if (expr?.kind !== 'AEXPR_OP' || stringsOf(expr.name).join() !== '=') return undefined
  if (tagOf(expr.rexpr) === 'A_Const' && columnOf(expr.lexpr as AstNode))
    return expr.rexpr as AstNode
  if (tagOf(expr.lexpr) === 'A_Const' && columnOf(expr.rexpr as AstNode))
    return expr.lexpr as AstNode
  return undefined
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
