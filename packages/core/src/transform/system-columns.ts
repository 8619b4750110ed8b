import type { QueryAnalysis } from '../analyze/query-analyzer.js'
import { type ScannedRelation, scannedRelation } from '../analyze/scanned-relation.js'
import { walkTree } from '../ast/map-tree.js'
import {
  type AstNode,
  bodyOf,
  columnRef,
  type Pg,
  resTarget,
  stringsOf,
  tagOf,
} from '../ast/node.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'

/** PostgreSQL's system columns: every table has them, none is in a select list by `*`. */
const SYSTEM_COLUMNS: ReadonlySet<string> = new Set([
  'tableoid',
  'ctid',
  'xmin',
  'xmax',
  'cmin',
  'cmax',
])

/** What one SELECT level needs so its system-column references work through the wrappers. */
export interface SystemColumnUse {
  /** System columns to add to each scan's wrapper, by the scan's RangeVar. */
  readonly scans: ReadonlyMap<object, readonly string[]>
  /** The select list with `*` and `t.*` written out, so the added columns stay out of them. */
  readonly targetList: AstNode[]
}

/**
 * `SELECT tableoid::regclass, * FROM parent`: a wrapper's select list holds the table's columns
 * only, so a system column would be missing (42703). When a level reads system columns of its
 * scans, they are added to those scans' wrappers, and the level's `*` and `t.*` are written out
 * as the visible columns they stand for (another FROM item's part of a `*` as `name.*`), so the
 * additions never show in them. Not done when a `*` could not be written out (a NATURAL or
 * USING join, a FROM item without a name) or the level uses a whole-row reference of a scan
 * (its row would gain the columns).
 */
export function systemColumnUse(
  select: Pg.SelectStmt,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): SystemColumnUse | undefined {
  if (!analysis.facts.columns.some((c) => SYSTEM_COLUMNS.has(c))) return undefined
  const scans: ScannedRelation[] = []
  // Each FROM item in order: a scan, or the name a `*` of another item is written as.
  const items: (ScannedRelation | { readonly other: string | undefined })[] = []
  let plain = true
  const visit = (item: AstNode): void => {
    const join = bodyOf<Pg.JoinExpr>(item, 'JoinExpr')
    if (join) {
      if (join.alias || join.isNatural || (join.usingClause?.length ?? 0) > 0) plain = false
      visit(join.larg as AstNode)
      visit(join.rarg as AstNode)
      return
    }
    // Plain table scans only (not under TABLESAMPLE), without a column alias list.
    const scan = tagOf(item) === 'RangeVar' ? scannedRelation(item, analysis, plans) : undefined
    if (
      scan?.kind !== 'table' ||
      !scan.plan.fragments ||
      (scan.rv.alias?.colnames?.length ?? 0) > 0
    ) {
      // A subquery, function, CTE, view or catalog: its `*` stays `name.*`.
      items.push({ other: itemName(item) })
      return
    }
    scans.push(scan)
    items.push(scan)
  }
  for (const item of select.fromClause ?? []) visit(item as AstNode)
  if (scans.length === 0) return undefined
  // An unqualified `*` is written out item by item, so every item must have a name.
  const star = (select.targetList ?? []).some((item) => {
    const val = bodyOf<Pg.ResTarget>(item, 'ResTarget')?.val
    const names = stringsOf(bodyOf<Pg.ColumnRef>(val, 'ColumnRef')?.fields)
    return names.length === 1 && names[0] === '*'
  })
  if (star && (!plain || items.some((i) => 'other' in i && i.other === undefined))) return undefined

  const wanted = new Map<object, Set<string>>()
  let wholeRow = false
  const clauses = [
    select.targetList,
    select.whereClause,
    select.havingClause,
    select.sortClause,
    select.groupClause,
    select.windowClause,
    select.distinctClause,
    select.fromClause,
  ]
  walkTree(clauses, (tag, body) => {
    if (tag !== 'ColumnRef') return true
    const names = stringsOf((body as Pg.ColumnRef).fields)
    const last = names[names.length - 1] as string
    if (names.length === 1 && scans.some((s) => s.alias === last)) wholeRow = true
    if (!SYSTEM_COLUMNS.has(last)) return false
    const qualifier = names[names.length - 2]
    for (const scan of scans) {
      if (qualifier !== undefined && qualifier !== scan.alias) continue
      const set = wanted.get(scan.rv) ?? new Set<string>()
      wanted.set(scan.rv, set.add(last))
    }
    return false
  })
  if (wanted.size === 0 || wholeRow) return undefined

  const targetList: AstNode[] = []
  for (const item of select.targetList ?? []) {
    const target = bodyOf<Pg.ResTarget>(item, 'ResTarget')
    const names = stringsOf(bodyOf<Pg.ColumnRef>(target?.val, 'ColumnRef')?.fields)
    if (names[names.length - 1] !== '*') {
      targetList.push(item as AstNode)
      continue
    }
    const qualifier = names[names.length - 2]
    if (qualifier !== undefined) {
      const scan = scans.find((s) => s.alias === qualifier)
      if (!scan) targetList.push(item as AstNode)
      else for (const c of scan.plan.columns) targetList.push(resTarget(columnRef(scan.alias, c)))
      continue
    }
    for (const from of items) {
      if ('other' in from) targetList.push(resTarget(columnRef(from.other as string, '*')))
      else for (const c of from.plan.columns) targetList.push(resTarget(columnRef(from.alias, c)))
    }
  }
  return {
    scans: new Map([...wanted].map(([rv, columns]) => [rv, [...columns]])),
    targetList,
  }
}

/** The name a FROM item's columns are qualified with, when it has one. */
function itemName(item: AstNode): string | undefined {
  const rv = bodyOf<Pg.RangeVar>(item, 'RangeVar')
  if (rv) return rv.alias?.aliasname ?? rv.relname
  const sample = bodyOf<Pg.RangeTableSample>(item, 'RangeTableSample')
  if (sample) return itemName(sample.relation as AstNode)
  const sub = bodyOf<Pg.RangeSubselect>(item, 'RangeSubselect')
  if (sub) return sub.alias?.aliasname
  return bodyOf<Pg.RangeFunction>(item, 'RangeFunction')?.alias?.aliasname
}
