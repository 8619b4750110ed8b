import { type AstNode, bodyOf, type Pg, resTarget, stringNode, stringsOf } from '../ast/node.js'
import {
  projectionError,
  type ScopeColumn,
  type ScopeLevel,
  type ScopeRelation,
  type Taint,
  wholeRowTaint,
} from './projection-scope.js'

/** What a `*` or `t.*` in a select list outputs, and how it is written without constrained columns. */
export interface StarOutput {
  readonly columns: readonly ScopeColumn[]
  readonly exact: boolean
  readonly opaqueTaint: Taint | undefined
  /** The select list items that replace the star, when it covered a constrained column. */
  readonly replacement: AstNode[] | undefined
  /** A constrained column the replacement leaves out. */
  readonly dropped: Taint | undefined
}

/**
 * A star in a select list. One that covers no constrained column stays as written; one that
 * does is written out as the columns it stands for without the constrained ones (`t.*` for a
 * FROM item without any), like a denied column is left out. When `expand` is false, or the
 * columns cannot be written out exactly (a join with USING, NATURAL or an alias, a FROM item
 * without a name or with unknown or duplicate column names), the star outputs them all.
 */
export function expandStar(
  names: readonly string[],
  levels: readonly ScopeLevel[],
  hit: (taint: Taint | undefined, level: number) => void,
  expand: boolean,
): StarOutput {
  let items: readonly ScopeRelation[] = []
  if (names.length === 1) {
    items = levels[levels.length - 1]?.stars ?? []
  } else {
    const qualifier = names[names.length - 2]
    for (let i = levels.length - 1; i >= 0; i--) {
      const found = (levels[i] as ScopeLevel).relations.filter((r) => r.name === qualifier)
      if (found.length === 0) continue
      for (const relation of found) hit(wholeRowTaint(relation), i)
      items = found
      break
    }
  }
  const columns: ScopeColumn[] = []
  let exact = true
  let opaqueTaint: Taint | undefined
  for (const relation of items) {
    if (relation.columns) columns.push(...relation.columns)
    else {
      exact = false
      opaqueTaint ??= relation.opaqueTaint
    }
  }
  const tainted = items.map(wholeRowTaint).find((t) => t)
  if (!tainted || !expand) {
    return { columns, exact, opaqueTaint, replacement: undefined, dropped: undefined }
  }
  const replacement: AstNode[] = []
  const kept: ScopeColumn[] = []
  for (const relation of items) {
    const taint = wholeRowTaint(relation)
    if (!taint && relation.name !== undefined) {
      replacement.push(resTarget(qualifiedStar(relation.name)))
      if (relation.columns) kept.push(...relation.columns)
      else exact = false
      continue
    }
    const targets = relation.written ?? writtenColumns(relation)
    if (!relation.columns || !targets) throw projectionError(taint ?? tainted)
    relation.columns.forEach((column, i) => {
      if (column.taint) return
      replacement.push(targets[i] as AstNode)
      kept.push(column)
    })
  }
  return {
    columns: kept,
    exact,
    opaqueTaint: exact ? undefined : opaqueTaint,
    replacement,
    dropped: tainted,
  }
}

/** `name.column` for each column, when the relation has a name and unique, known column names. */
function writtenColumns(relation: ScopeRelation): AstNode[] | undefined {
  const names = relation.columns?.map((c) => c.name)
  const name = relation.name
  if (name === undefined || !names || names.some((n) => n === undefined)) return undefined
  if (new Set(names).size !== names.length) return undefined
  return names.map((column) => resTarget(qualifiedColumn(name, column as string)))
}

/**
 * The `*` of a join with USING or NATURAL, as PostgreSQL orders it: the merged columns first
 * (the left side's value for an inner or left join, the right side's for a right join,
 * `coalesce` of both for a full join, `alias.column` under `USING (…) AS alias`), then each
 * side's other columns. Either side may itself be a join whose `*` is written out. Undefined
 * where that cannot be written exactly.
 */
export function mergedStar(
  join: Pg.JoinExpr,
  left: readonly ScopeRelation[],
  right: readonly ScopeRelation[],
  merged: readonly string[] | undefined,
): ScopeRelation | undefined {
  const l = sideOf(left)
  const r = sideOf(right)
  if (!l || !r || !merged) return undefined
  const using = join.join_using_alias?.aliasname
  const columns: ScopeColumn[] = []
  const written: AstNode[] = []
  for (const name of merged) {
    const li = only(l.columns, name)
    const ri = only(r.columns, name)
    if (li === undefined || ri === undefined) return undefined
    const [lc, rc] = [l.columns[li] as ScopeColumn, r.columns[ri] as ScopeColumn]
    columns.push({ name, taint: lc.taint ?? rc.taint })
    const lv = targetValue(l.written[li])
    const rv = targetValue(r.written[ri])
    if (using !== undefined) written.push(resTarget(qualifiedColumn(using, name)))
    else if (join.jointype === 'JOIN_FULL') {
      written.push(resTarget({ CoalesceExpr: { args: [lv, rv] } } as AstNode, name))
    } else written.push(resTarget(join.jointype === 'JOIN_RIGHT' ? rv : lv, name))
  }
  for (const side of [l, r]) {
    side.columns.forEach((column, i) => {
      if (merged.includes(column.name as string)) return
      columns.push(column)
      written.push(side.written[i] as AstNode)
    })
  }
  return { name: undefined, columns, opaqueTaint: undefined, written }
}

/** One side of a join, its items' columns in order with how each is written out. */
function sideOf(
  items: readonly ScopeRelation[],
): { columns: ScopeColumn[]; written: AstNode[] } | undefined {
  const columns: ScopeColumn[] = []
  const written: AstNode[] = []
  for (const item of items) {
    const targets = item.written ?? writtenColumns(item)
    if (!targets || !item.columns) return undefined
    columns.push(...item.columns)
    written.push(...targets)
  }
  return { columns, written }
}

/** The position of the one column with the name (PostgreSQL refuses a USING name found twice). */
function only(columns: readonly ScopeColumn[], name: string): number | undefined {
  const at = columns.findIndex((c) => c.name === name)
  if (at < 0 || columns.findIndex((c, i) => i > at && c.name === name) >= 0) return undefined
  return at
}

function targetValue(target: AstNode | undefined): AstNode {
  return bodyOf<Pg.ResTarget>(target, 'ResTarget')?.val as AstNode
}

function qualifiedStar(name: string): AstNode {
  return { ColumnRef: { fields: [stringNode(name), { A_Star: {} }] } } as AstNode
}

function qualifiedColumn(relation: string, column: string): AstNode {
  return { ColumnRef: { fields: [stringNode(relation), stringNode(column)] } } as AstNode
}

/**
 * The name PostgreSQL gives a select list item, where it is certain: an alias, a column, a
 * function, a cast of one of those, a field or subscript. Undefined otherwise; a derived
 * table's column without a known name may then be matched by any name (projection-scope.ts).
 */
export function outputName(target: Pg.ResTarget): string | undefined {
  return target.name ?? nameOf(target.val)
}

function nameOf(value: unknown): string | undefined {
  const ref = bodyOf<Pg.ColumnRef>(value, 'ColumnRef')
  if (ref) {
    const names = stringsOf(ref.fields)
    const last = names[names.length - 1]
    return last === '*' ? undefined : last
  }
  const call = bodyOf<Pg.FuncCall>(value, 'FuncCall')
  if (call) return stringsOf(call.funcname).pop()
  const cast = bodyOf<Pg.TypeCast>(value, 'TypeCast')
  if (cast) return nameOf(cast.arg)
  return undefined
}
