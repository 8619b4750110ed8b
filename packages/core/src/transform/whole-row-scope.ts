import type { QueryAnalysis } from '../analyze/query-analyzer.js'
import { scannedRelation } from '../analyze/scanned-relation.js'
import { type AstNode, bodyOf, type Pg, stringsOf } from '../ast/node.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'

/**
 * Whole-row references (`row_to_json(t)`, `coalesce(t)`, `SELECT t FROM t`) have the table's
 * row type in PostgreSQL. After the rewrite `t` names a derived table, whose whole row is an
 * anonymous `record`, so the rewrite casts it back to the table's row type: `t::schema.table`.
 * Only where that type is exactly what the scan returns: no denied column (the row would lack
 * it) and no mask (a mask may change a column's type).
 *
 * PostgreSQL reads a bare name as a column first, at any query level, and as a range alias only
 * when no column has the name; a level whose columns are not all known stops the search.
 */
export interface WholeRowLevel {
  /**
   * Range aliases of wrapped scans, with the row type to cast to, or undefined where the cast
   * would not fit (the alias still shadows outer ones).
   */
  readonly rows: ReadonlyMap<string, RowType | undefined>
  /** Column names this level exposes, or undefined when some FROM item's columns are unknown. */
  readonly columns: ReadonlySet<string> | undefined
  /** Set while ORDER BY, GROUP BY and DISTINCT ON are mapped: a bare name there may be an output column. */
  suspended: boolean
}

/**
 * Whether the statement may hold a whole-row reference at all: one is a column reference named
 * like a scanned table or view (the analyzer lists every referenced name), so most statements
 * need no levels.
 */
export function mayReadWholeRows(analysis: QueryAnalysis): boolean {
  const names = new Set(analysis.facts.columns)
  for (const [node, reference] of analysis.references) {
    if (reference.kind !== 'table' && reference.kind !== 'view') continue
    const rv = node as Pg.RangeVar
    if (names.has(rv.alias?.aliasname ?? rv.relname ?? '')) return true
  }
  return false
}

export function wholeRowLevel(
  select: Pg.SelectStmt,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): WholeRowLevel | undefined {
  const from = select.fromClause
  if (!from || from.length === 0) return undefined
  const rows = new Map<string, RowType | undefined>()
  const columns = new Set<string>()
  let known = true
  const visit = (item: AstNode): void => {
    const join = bodyOf<Pg.JoinExpr>(item, 'JoinExpr')
    if (join) {
      // A join alias is a range name of its own, with columns this pass does not work out.
      if (join.alias) known = false
      visit(join.larg as AstNode)
      visit(join.rarg as AstNode)
      return
    }
    const named = otherItemColumns(item)
    if (named !== 'not-other') {
      if (named === undefined) known = false
      else for (const c of named) columns.add(c)
      return
    }
    const scan = scannedRelation(item, analysis, plans)
    if (!scan) {
      known = false
      return
    }
    const { rv, plan } = scan
    const aliases = stringsOf(rv.alias?.colnames)
    plan.columns.forEach((c, i) => {
      columns.add(aliases[i] ?? c)
    })
    const fits = plan.denied.size === 0 && plan.masked.size === 0
    rows.set(scan.alias, fits ? { schema: plan.table.schema, name: plan.table.name } : undefined)
  }
  for (const item of from) visit(item as AstNode)
  return { rows, columns: known ? columns : undefined, suspended: false }
}

/**
 * The column names of a FROM item that is not a table: a subquery's output names, or the
 * names an alias list gives a subquery or function; undefined when they are not known here,
 * 'not-other' for a table scan.
 */
function otherItemColumns(item: AstNode): readonly string[] | undefined | 'not-other' {
  const sub = bodyOf<Pg.RangeSubselect>(item, 'RangeSubselect')
  const fn = bodyOf<Pg.RangeFunction>(item, 'RangeFunction')
  if (!sub && !fn) return 'not-other'
  const aliases = stringsOf((sub ?? fn)?.alias?.colnames)
  if (fn) return aliases.length > 0 ? aliases : undefined
  let select = bodyOf<Pg.SelectStmt>(sub?.subquery, 'SelectStmt')
  while (select?.larg) select = select.larg
  const outputs = (select?.targetList ?? []).map((item) => {
    const target = bodyOf<Pg.ResTarget>(item, 'ResTarget')
    if (target?.name !== undefined) return target.name
    const names = stringsOf(bodyOf<Pg.ColumnRef>(target?.val, 'ColumnRef')?.fields)
    if (names.length > 0) return names[names.length - 1] as string
    const call = stringsOf(bodyOf<Pg.FuncCall>(target?.val, 'FuncCall')?.funcname)
    // Other expressions get a name no alias can be mistaken for.
    return call[call.length - 1] ?? '?column?'
  })
  if (!select?.targetList || outputs.includes('*')) return undefined
  return [...aliases, ...outputs.slice(aliases.length)]
}

/**
 * The row type a bare name refers to as a whole-row reference, or undefined when it is (or may
 * be) a column. `levels` runs from the outermost query to the current one.
 */
export function wholeRowType(
  name: string,
  levels: readonly (WholeRowLevel | undefined)[],
): RowType | undefined {
  const current = levels[levels.length - 1]
  if (current?.suspended) return undefined
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]
    if (!level) continue
    if (!level.columns || level.columns.has(name)) return undefined
  }
  for (let i = levels.length - 1; i >= 0; i--) {
    const rows = levels[i]?.rows
    if (rows?.has(name)) return rows.get(name)
  }
  return undefined
}

/** A relation's row type, by upstream schema and name. */
export interface RowType {
  readonly schema: string
  readonly name: string
}
