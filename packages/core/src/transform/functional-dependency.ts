import type { QueryAnalysis } from '../analyze/query-analyzer.js'
import { scannedRelation } from '../analyze/scanned-relation.js'
import { walkTree } from '../ast/map-tree.js'
import { type AstNode, bodyOf, columnRef, type Pg, stringsOf } from '../ast/node.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'
import { groupedColumns } from './grouping-set-columns.js'

/**
 * PostgreSQL lets a query that groups by a table's primary key select the table's other
 * columns (functional dependency: `SELECT id, title FROM articles GROUP BY id`). It proves this
 * for base tables only, and after the rewrite every scan is a derived table, so the query
 * would fail with 42803. The rewrite adds the dependent columns the query uses to its GROUP BY
 * instead: the key already makes them constant within each group, so the groups stay the same.
 *
 * Only when the key's columns are visible and unmasked (a masked key no longer identifies a
 * row), the key is in every grouping set (columns are added to all of them, as PostgreSQL's
 * proof requires), and the scan has no column aliases.
 * Columns of types without an equality operator cannot be grouped and are left out.
 */
export function dependentGroupColumns(
  select: Pg.SelectStmt,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): AstNode[] {
  const groupClause = select.groupClause
  if (!groupClause || groupClause.length === 0) return []
  const columns = groupedColumns(groupClause, (item) => groupedColumnRef(item, select))
  if (!columns) return []
  const scans: KeyedScan[] = []
  for (const item of select.fromClause ?? []) collectScans(item as AstNode, analysis, plans, scans)
  if (scans.length === 0) return []

  const byScan = (refs: readonly string[][]) => {
    const out = new Map<KeyedScan, Set<string>>(scans.map((s) => [s, new Set()]))
    for (const ref of refs)
      for (const [scan, column] of resolve(ref, scans)) out.get(scan)?.add(column)
    return out
  }
  // The key must be in every grouping set; a column in any set is NULL in the others.
  const common = byScan(columns.common)
  const grouped = byScan(columns.anywhere)
  const keyed = scans.filter((scan) =>
    (scan.plan.table.table.primaryKey ?? []).every((c) => common.get(scan)?.has(c)),
  )
  if (keyed.length === 0) return []

  const used = new Map<KeyedScan, Set<string>>(keyed.map((s) => [s, new Set()]))
  const visit = (tag: string, body: object): boolean => {
    if (tag !== 'ColumnRef') return true
    for (const [scan, column] of resolve(stringsOf((body as Pg.ColumnRef).fields), keyed)) {
      const columns = column === '*' ? scan.plan.columns : [column]
      for (const c of columns) used.get(scan)?.add(c)
    }
    return false
  }
  for (const part of [
    select.targetList,
    select.havingClause,
    select.sortClause,
    select.windowClause,
  ]) {
    walkTree(part, visit)
  }

  const extra: AstNode[] = []
  for (const scan of keyed) {
    for (const column of scan.plan.columns) {
      if (!used.get(scan)?.has(column) || grouped.get(scan)?.has(column)) continue
      if (!groupable(scan.plan.table.table.columns.find((c) => c.name === column)?.type)) continue
      extra.push(columnRef(scan.alias, column))
    }
  }
  return extra
}

/** A wrapped table scan of the FROM list whose primary key is visible and unmasked. */
interface KeyedScan {
  readonly alias: string
  readonly plan: ScanPlan
}

function collectScans(
  item: AstNode,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
  out: KeyedScan[],
): void {
  const join = bodyOf<Pg.JoinExpr>(item, 'JoinExpr')
  if (join) {
    // A join with its own alias hides the names of the tables inside it.
    if (join.alias) return
    collectScans(join.larg as AstNode, analysis, plans, out)
    collectScans(join.rarg as AstNode, analysis, plans, out)
    return
  }
  const scan = scannedRelation(item, analysis, plans)
  if (scan?.kind !== 'table' || (scan.rv.alias?.colnames?.length ?? 0) > 0) return
  const { plan } = scan
  const key = plan.table.table.primaryKey
  if (!key || key.length === 0) return
  if (!key.every((c) => plan.columns.includes(c) && !plan.masked.has(c))) return
  out.push({ alias: scan.alias, plan })
}

/** A GROUP BY item as column reference names: a column, or an output position naming one. */
function groupedColumnRef(item: AstNode, select: Pg.SelectStmt): string[] | undefined {
  const ref = bodyOf<Pg.ColumnRef>(item, 'ColumnRef')
  if (ref) return stringsOf(ref.fields)
  const position = bodyOf<Pg.A_Const>(item, 'A_Const')?.ival
  if (position === undefined) return undefined
  const target = bodyOf<Pg.ResTarget>(select.targetList?.[(position.ival ?? 0) - 1], 'ResTarget')
  const named = bodyOf<Pg.ColumnRef>(target?.val, 'ColumnRef')
  return named ? stringsOf(named.fields) : undefined
}

/**
 * The scans and columns a reference may name: `alias.column`, `alias.*`, the whole row
 * `alias`, or an unqualified column of any scan that has it. Over-matching only adds a
 * dependent column to the grouping, which never changes the groups.
 */
function resolve(names: readonly string[], scans: readonly KeyedScan[]): [KeyedScan, string][] {
  const last = names[names.length - 1] ?? ''
  const out: [KeyedScan, string][] = []
  for (const scan of scans) {
    if (names.length === 1) {
      if (last === '*' || scan.plan.columns.includes(last)) out.push([scan, last])
      else if (last === scan.alias) out.push([scan, '*'])
    } else if (names[names.length - 2] === scan.alias) {
      if (last === '*' || scan.plan.columns.includes(last)) out.push([scan, last])
    }
  }
  return out
}

/** Types without a default equality operator: a GROUP BY cannot name their columns. */
const UNGROUPABLE = new Set([
  'json',
  'xml',
  'point',
  'line',
  'lseg',
  'box',
  'path',
  'polygon',
  'circle',
])

function groupable(type: string | undefined): boolean {
  return type !== undefined && !UNGROUPABLE.has(type.replace(/(\[\])+$/, ''))
}
