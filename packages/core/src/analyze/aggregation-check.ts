import { walkTree } from '../ast/map-tree.js'
import { type AstNode, bodyOf, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { PolicyDeniedError } from '../errors.js'
import { STATISTIC_AGGREGATES } from '../policy/aggregate-kinds.js'
import { AGGREGATE_FUNCTIONS } from '../policy/function-kinds.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { AggregationRule, ScanPlan } from '../session/scan-plan.js'
import type { QueryAnalysis } from './query-analyzer.js'

/** A scan of an aggregation-constrained table in one SELECT's FROM list. */
export interface ConstrainedScan {
  readonly rv: Pg.RangeVar
  /** The name its columns are qualified with: the alias, or the table name. */
  readonly alias: string
  readonly plan: ScanPlan
  readonly rule: AggregationRule
}

/** A SELECT that reads constrained tables and passed the checks: it is rewritten. */
export interface AggregatingBlock {
  readonly scans: readonly ConstrainedScan[]
}

/**
 * Checks every statement that reads a table under an aggregation policy (docs/policies.md,
 * "Aggregation: exact rules") and returns the SELECTs to rewrite, by body identity, or
 * undefined when no such table is read. Refuses, naming the policy type and never the policy,
 * every shape it cannot prove safe: a scan outside an aggregating SELECT (rows, `DISTINCT`
 * without aggregates, `LIMIT`, window functions, views), aggregates that can hand back one
 * row's value unless allowed, aggregate arguments that combine columns or conditions that could
 * single one row out (`FILTER`, two columns), grouping sets, and a second aggregation of the
 * same table in one statement (the difference of two would isolate rows).
 */
export function checkAggregation(
  query: AstNode,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): ReadonlyMap<object, AggregatingBlock> | undefined {
  const constrained = new Map<object, ScanPlan>()
  for (const [node, reference] of analysis.references) {
    if (reference.kind !== 'table' && reference.kind !== 'view') continue
    const plan = plans.get(reference.entry)
    if (!plan?.aggregation) continue
    if (reference.kind === 'view')
      throw refused(`"${reference.written}" is a view: aggregation policies apply to tables`)
    constrained.set(node, plan)
  }
  if (constrained.size === 0) return undefined

  const blocks = new Map<object, AggregatingBlock>()
  const covered = new Set<object>()
  const aggregated = new Set<ScanPlan>()
  const visitBlock = (select: Pg.SelectStmt): void => {
    // Set operation branches are untagged SELECT bodies.
    if (select.larg) visitBlock(select.larg)
    if (select.rarg) visitBlock(select.rarg)
    const scans: ConstrainedScan[] = []
    for (const item of select.fromClause ?? [])
      collectScans(item as AstNode, constrained, scans, false)
    if (scans.length === 0) return
    for (const scan of scans) covered.add(scan.rv)
    // Clients read a table's columns with a statement that returns no row (`LIMIT 0`).
    if (returnsNoRow(select)) return
    checkBlock(select, scans)
    blocks.set(select, { scans })
    for (const plan of new Set(scans.map((s) => s.plan))) {
      if (aggregated.has(plan)) throw refused('a statement may aggregate the table only once')
      aggregated.add(plan)
    }
  }
  walkTree(query, (tag, body) => {
    if (tag === 'SelectStmt') visitBlock(body as Pg.SelectStmt)
    return true
  })
  for (const node of constrained.keys()) {
    if (!covered.has(node)) throw refused(notAggregated)
  }
  return blocks
}

const notAggregated =
  'the table may be read only through aggregates (GROUP BY or aggregate functions in the same SELECT)'

/** A refusal that names the policy type, never the policy (docs/errors.md). */
function refused(reason: string): PolicyDeniedError {
  return new PolicyDeniedError(`aggregation policy: ${reason}`)
}

function collectScans(
  item: AstNode,
  constrained: ReadonlyMap<object, ScanPlan>,
  out: ConstrainedScan[],
  underAlias: boolean,
): void {
  const join = bodyOf<Pg.JoinExpr>(item, 'JoinExpr')
  if (join) {
    const hidden = underAlias || join.alias !== undefined
    collectScans(join.larg as AstNode, constrained, out, hidden)
    collectScans(join.rarg as AstNode, constrained, out, hidden)
    return
  }
  const sample = bodyOf<Pg.RangeTableSample>(item, 'RangeTableSample')
  const rv = bodyOf<Pg.RangeVar>(sample ? sample.relation : item, 'RangeVar')
  if (!rv) return
  const plan = constrained.get(rv)
  if (!plan?.aggregation) return
  // The row identity is read as `alias.ctid`: a join alias would hide the table's name.
  if (underAlias) throw refused('the table may not be read inside a join that has an alias')
  if ((rv.alias?.colnames?.length ?? 0) > 0)
    throw refused('the table may not be read with column aliases')
  out.push({ rv, alias: rv.alias?.aliasname ?? rv.relname ?? '', plan, rule: plan.aggregation })
}

/**
 * `LIMIT 0`, `WHERE false` or `WHERE 1 = 0` (the probes drivers and BI tools send for a
 * result's columns): the SELECT returns no row whatever the table holds.
 */
function returnsNoRow(select: Pg.SelectStmt): boolean {
  const limit = bodyOf<Pg.A_Const>(select.limitCount, 'A_Const')
  if (limit?.ival !== undefined && (limit.ival.ival ?? 0) === 0) return true
  const where = select.whereClause
  const constant = bodyOf<Pg.A_Const>(where, 'A_Const')
  if (constant?.boolval !== undefined) return constant.boolval.boolval !== true
  const comparison = bodyOf<Pg.A_Expr>(where, 'A_Expr')
  if (comparison?.kind !== 'AEXPR_OP' || stringsOf(comparison.name).join('.') !== '=') return false
  const left = bodyOf<Pg.A_Const>(comparison.lexpr, 'A_Const')?.ival
  const right = bodyOf<Pg.A_Const>(comparison.rexpr, 'A_Const')?.ival
  return left !== undefined && right !== undefined && (left.ival ?? 0) !== (right.ival ?? 0)
}

/** The clauses whose expressions are computed per group, after aggregation. */
function groupLevelClauses(select: Pg.SelectStmt): unknown[] {
  return [select.targetList, select.havingClause, select.sortClause]
}

function checkBlock(select: Pg.SelectStmt, scans: readonly ConstrainedScan[]): void {
  const grouped = (select.groupClause ?? []).length > 0
  let aggregates = 0
  let windows = false
  visitCalls(groupLevelClauses(select), (call) => {
    if (call.over) windows = true
    else if (isAggregateCall(call)) {
      aggregates++
      checkAggregateCall(call, scans)
    }
  })
  if (!grouped && aggregates === 0) throw refused(notAggregated)
  for (const item of select.groupClause ?? []) {
    const set = bodyOf<Pg.GroupingSet>(item, 'GroupingSet')
    if (set && set.kind !== 'GROUPING_SET_EMPTY')
      throw refused('GROUPING SETS, ROLLUP and CUBE are not supported over the table')
  }
  if ((select.distinctClause ?? []).some((item) => tagOf(item) !== undefined))
    throw refused('DISTINCT ON is not supported over the table')
  // A grouped statement is answered as its groups of enough rows plus one remainder group:
  // a window function would see only one of the two parts.
  if (grouped && (windows || (select.windowClause ?? []).length > 0))
    throw refused('window functions are not supported in a grouped statement over the table')
  if (select.lockingClause && select.lockingClause.length > 0)
    throw refused('row locking clauses are not supported over the table')
}

/** Calls `visit` for every function call of the clauses, sublinks included. */
function visitCalls(clauses: unknown, visit: (call: Pg.FuncCall) => void): void {
  walkTree(clauses, (tag, body) => {
    if (tag === 'FuncCall') visit(body as Pg.FuncCall)
    return true
  })
}

function isAggregateCall(call: Pg.FuncCall): boolean {
  if (call.agg_star || call.agg_distinct || call.agg_within_group) return true
  if (call.agg_filter !== undefined || (call.agg_order?.length ?? 0) > 0) return true
  const names = stringsOf(call.funcname)
  return AGGREGATE_FUNCTIONS.has((names[names.length - 1] ?? '').toLowerCase())
}

/**
 * An aggregate over the constrained tables' columns: a statistic, or a value-revealing one
 * every constrained table touched allows; over at most one column, without FILTER (both could
 * single out one row inside a large group: `sum(salary) FILTER (WHERE id = 42)`,
 * `sum(salary * (id = 42)::int)`).
 */
function checkAggregateCall(call: Pg.FuncCall, scans: readonly ConstrainedScan[]): void {
  if (call.agg_filter !== undefined)
    throw refused('aggregate FILTER clauses are not supported over the table')
  const columns = new Set<string>()
  const touched = new Set<ConstrainedScan>()
  let sublink = false
  walkTree([call.args, call.agg_order], (tag, body) => {
    if (tag === 'SubLink') sublink = true
    if (tag !== 'ColumnRef') return true
    const names = stringsOf((body as Pg.ColumnRef).fields)
    columns.add(names.join('.'))
    for (const scan of mayName(names, scans)) touched.add(scan)
    return false
  })
  if (touched.size === 0 && !sublink) return
  if (sublink) throw refused('aggregate arguments may not contain subqueries over the table')
  const names = stringsOf(call.funcname)
  const name = (names[names.length - 1] ?? '').toLowerCase()
  const qualified = names.length > 1 && names[0] !== 'pg_catalog'
  const allowed =
    !qualified &&
    (STATISTIC_AGGREGATES.has(name) ||
      [...touched].every((scan) => scan.rule.allowedAggregates.has(name)))
  if (!allowed)
    throw refused(`${name}() may hand back one row's value and is not allowed over the table`)
  if (columns.size > 1)
    throw refused(
      'an aggregate over the table may read only one column (no expressions of several)',
    )
}

/**
 * The constrained scans a column reference may name, erring towards more: a qualified one
 * names the scan with that alias (a join alias over them was refused); an unqualified one every
 * scan with a column of that name, and a bare alias is that scan's whole row.
 */
function mayName(names: readonly string[], scans: readonly ConstrainedScan[]): ConstrainedScan[] {
  const last = names[names.length - 1] ?? ''
  if (names.length === 1) {
    return scans.filter((s) => s.alias === last || s.plan.columns.includes(last) || last === 'ctid')
  }
  const qualifier = names[names.length - 2]
  return scans.filter((s) => s.alias === qualifier)
}
