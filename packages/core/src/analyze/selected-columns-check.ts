import { type AstNode, stringsOf, tagOf } from '../ast/node.js'
import { nodeBody, taggedBody } from '../ast/tag-dispatch.js'
import { PolicyDeniedError } from '../errors.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'
import type { QueryAnalysis } from './query-analyzer.js'
import { scannedRelation } from './scanned-relation.js'

interface FromTable {
  readonly name: string
  readonly plan: ScanPlan
}

/**
 * Spec 7: when `column_deny` removes every selected column, answer 42501 naming the denied
 * columns before anything runs, never a zero-column result. A denied column selected beside
 * visible ones is left to fail as "column does not exist" (it is absent from the scan).
 */
export function checkSelectedColumns(
  query: AstNode,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): void {
  const select = nodeBody(query, 'SelectStmt')
  if (!select) return
  if (select.op !== undefined && select.op !== 'SETOP_NONE') {
    checkSelectedColumns(select.larg as unknown as AstNode, analysis, plans)
    checkSelectedColumns(select.rarg as unknown as AstNode, analysis, plans)
    return
  }
  const targets = select.targetList ?? []
  if (targets.length === 0) return
  const tables: FromTable[] = []
  const opaque = { value: false }
  for (const item of select.fromClause ?? [])
    collectFrom(item as AstNode, analysis, plans, tables, opaque)
  const denied: string[] = []
  let live = false
  for (const target of targets) {
    const val = nodeBody(target, 'ResTarget')?.val as AstNode | undefined
    const ref = nodeBody(val, 'ColumnRef')
    if (!ref) {
      live = true
      continue
    }
    const names = stringsOf(ref.fields)
    const column = names[names.length - 1] as string
    const qualifier = names.length >= 2 ? names[names.length - 2] : undefined
    const relevant = qualifier === undefined ? tables : tables.filter((t) => t.name === qualifier)
    if (relevant.length === 0 || (qualifier === undefined && opaque.value)) {
      live = true
      continue
    }
    if (column === '*') {
      if (relevant.some((t) => t.plan.columns.length > 0)) live = true
      else for (const t of relevant) denied.push(...t.plan.denied)
      continue
    }
    if (relevant.some((t) => t.plan.columns.includes(column))) live = true
    else if (relevant.some((t) => t.plan.denied.has(column))) denied.push(column)
    else live = true
  }
  if (!live && denied.length > 0) {
    throw new PolicyDeniedError(
      `permission denied for column(s): ${[...new Set(denied)].join(', ')}`,
    )
  }
}

function collectFrom(
  item: AstNode,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
  out: FromTable[],
  opaque: { value: boolean },
): void {
  const tag = tagOf(item)
  if (tag === 'JoinExpr') {
    const join = taggedBody(item, 'JoinExpr')
    collectFrom(join.larg as AstNode, analysis, plans, out, opaque)
    collectFrom(join.rarg as AstNode, analysis, plans, out, opaque)
    return
  }
  const scan = scannedRelation(item, analysis, plans)
  if (!scan) {
    opaque.value = true
    return
  }
  out.push({ name: scan.alias, plan: scan.plan })
}
