import { walkTree } from '../ast/map-tree.js'
import { type AstNode, bodyOf, type Pg, stringsOf, tagOf } from '../ast/node.js'

/** The column references of a GROUP BY: in every grouping set, and anywhere in it. */
export interface GroupedColumns {
  /** Columns every grouping set groups by: PostgreSQL's functional-dependency proof uses these. */
  readonly common: readonly string[][]
  /** Columns some grouping set groups by: NULL in the others, so never added to a set. */
  readonly anywhere: readonly string[][]
}

/**
 * Reads a GROUP BY clause as PostgreSQL does for functional dependency: a plain item is in
 * every set; `GROUPING SETS` contributes what all its members share; `ROLLUP`, `CUBE` and `()`
 * include the empty set, so nothing. Undefined when an output position is used inside a
 * grouping set (its column is not resolved here).
 */
export function groupedColumns(
  groupClause: readonly unknown[],
  positionRef: (item: AstNode) => string[] | undefined,
): GroupedColumns | undefined {
  const common: string[][] = []
  const anywhere: string[][] = []
  let unresolved = false
  for (const item of groupClause) {
    const node = item as AstNode
    if (tagOf(node) === 'GroupingSet') {
      walkTree(node, (tag, body) => {
        if (tag === 'A_Const') unresolved = true
        if (tag === 'ColumnRef') anywhere.push(stringsOf((body as Pg.ColumnRef).fields))
        return tag !== 'ColumnRef'
      })
      common.push(...setCommon(node))
      continue
    }
    const ref = positionRef(node)
    if (ref) {
      common.push(ref)
      anywhere.push(ref)
    }
  }
  return unresolved ? undefined : { common, anywhere }
}

/** The references every set produced by one grouping item shares. */
function setCommon(item: AstNode): string[][] {
  const ref = bodyOf<Pg.ColumnRef>(item, 'ColumnRef')
  if (ref) return [stringsOf(ref.fields)]
  const row = bodyOf<Pg.RowExpr>(item, 'RowExpr')
  if (row) return (row.args ?? []).flatMap((arg) => setCommon(arg as AstNode))
  const set = bodyOf<Pg.GroupingSet>(item, 'GroupingSet')
  if (!set) return []
  const content = (set.content ?? []) as AstNode[]
  switch (set.kind) {
    case 'GROUPING_SET_SIMPLE':
      return content.flatMap(setCommon)
    case 'GROUPING_SET_SETS': {
      if (content.length === 0) return []
      const [first, ...rest] = content.map(setCommon)
      const key = (names: string[]) => names.join('\u0000')
      return (first ?? []).filter((names) =>
        rest.every((other) => other.some((o) => key(o) === key(names))),
      )
    }
    default:
      // ROLLUP, CUBE and the empty set all include a set without any column.
      return []
  }
}
