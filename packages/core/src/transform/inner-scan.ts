import type { PushdownCandidate } from '../analyze/leakproof-conjuncts.js'
import { expressionText, scanBodyFragment } from '../ast/deparse.js'
import { mapTree } from '../ast/map-tree.js'
import {
  type AstNode,
  and,
  columnRef,
  type Pg,
  rangeVar,
  resTarget,
  selectStmt,
  stringsOf,
} from '../ast/node.js'
import { taggedBody } from '../ast/tag-dispatch.js'
import type { ScanFragments, ScanPlan } from '../session/scan-plan.js'

/**
 * The plan's subquery with the user's `ONLY` and `TABLESAMPLE` moved onto the inner scan and
 * the leakproof user conjuncts added inside the fence.
 */
export function innerScan(
  plan: ScanPlan,
  fragments: ScanFragments,
  rv: Pg.RangeVar,
  sample: Pg.RangeTableSample | undefined,
  pushed: readonly AstNode[],
  system: readonly string[],
): AstNode {
  // The parser writes `inh: true` for a plain scan and leaves it out for `ONLY`.
  const only = rv.inh !== true
  // The common case: the whole body was deparsed once per session.
  if (!only && !sample && pushed.length === 0 && system.length === 0) return fragments.body
  if (!only && !sample && system.length === 0) {
    const conjuncts = fragments.whereText === undefined ? [] : [fragments.whereText]
    for (const conjunct of pushed) conjuncts.push(expressionText(conjunct))
    return scanBodyFragment(fragments.head, conjuncts, plan.filtered)
  }
  let scan: AstNode = rangeVar(plan.table.schema, plan.table.name)
  if (only) {
    // The deparser prints ONLY for a RangeVar without `inh`, as the parser gives it.
    const { inh: _inh, ...rest } = taggedBody(scan, 'RangeVar')
    scan = { RangeVar: rest }
  }
  if (sample) scan = { RangeTableSample: { ...sample, relation: scan } }
  return selectStmt({
    targets: [fragments.targets, ...system.map((c) => resTarget(columnRef(plan.table.name, c)))],
    from: [scan],
    where: and(fragments.where, ...pushed),
    fence: plan.filtered,
  })
}

/** The most user conjuncts copied below one fence. */
const MAX_PUSHED_CONJUNCTS = 32

/**
 * Copies of the user's leakproof conjuncts on this scan, re-qualified to the inner table.
 * Only for fenced scans (unfenced ones PostgreSQL pushes down itself) and only on visible,
 * unmasked columns, so they read exactly what the user could read above the fence.
 */
export function leakproofConjuncts(
  plan: ScanPlan,
  candidates: readonly PushdownCandidate[] | undefined,
): AstNode[] {
  if (!plan.filtered) return []
  return copyConjuncts(
    candidates,
    plan.table.name,
    (column) => plan.columns.includes(column) && !plan.masked.has(column),
  )
}

/** The distinct candidates on columns `plain` accepts, at most 32, re-qualified to `inner`. */
export function copyConjuncts(
  candidates: readonly PushdownCandidate[] | undefined,
  inner: string,
  plain: (column: string) => boolean,
  withDerived = false,
): AstNode[] {
  if (!candidates) return []
  // Distinct ones, and a few: enough for the planner to pick an index; thousands would only
  // multiply its work on a statement with thousands of conditions.
  const seen = new Set<string>()
  const pushable = candidates.filter((c) => {
    if (seen.size >= MAX_PUSHED_CONJUNCTS) return false
    if ((c.derived && !withDerived) || c.outer || c.through) return false
    if (!plain(c.column)) return false
    const key = JSON.stringify(c.node)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  return pushable.map((c) =>
    mapTree(c.node, (_node, tag, body) =>
      tag === 'ColumnRef'
        ? columnRef(inner, stringsOf((body as Pg.ColumnRef).fields).slice(-1)[0] as string)
        : undefined,
    ),
  )
}
