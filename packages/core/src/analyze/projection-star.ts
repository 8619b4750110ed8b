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
    if (relation.name === undefined) throw projectionError(taint ?? tainted)
    if (!taint) {
      replacement.push(resTarget(qualifiedStar(relation.name)))
      if (relation.columns) kept.push(...relation.columns)
      else exact = false
      continue
    }
    const written = relation.columns?.map((c) => c.name)
    if (
      !relation.columns ||
      !written ||
      written.some((n) => n === undefined) ||
      new Set(written).size !== written.length
    ) {
      throw projectionError(taint)
    }
    for (const column of relation.columns) {
      if (column.taint) continue
      replacement.push(resTarget(qualifiedColumn(relation.name, column.name as string)))
      kept.push(column)
    }
  }
  return {
    columns: kept,
    exact,
    opaqueTaint: exact ? undefined : opaqueTaint,
    replacement,
    dropped: tainted,
  }
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
