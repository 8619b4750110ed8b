import type { AggregatingBlock, ConstrainedScan } from '../analyze/aggregation-check.js'
import { mapFields, mapTree, type NodeMapper } from '../ast/map-tree.js'
import {
  type AstNode,
  and,
  bodyOf,
  builtinOp,
  columnRef,
  numberConst,
  type Pg,
  resTarget,
  stringNode,
  stringsOf,
  typeCast,
} from '../ast/node.js'
import { PolicyDeniedError } from '../errors.js'

/** The system columns that identify a row of a table with descendants (ctid alone otherwise). */
const ROW_IDENTITY_COLUMNS = ['tableoid', 'ctid'] as const

/** The system columns each constrained scan's wrapper must carry, by RangeVar. */
export function rowIdentityColumns(
  blocks: ReadonlyMap<object, AggregatingBlock>,
): ReadonlyMap<object, readonly string[]> {
  const out = new Map<object, readonly string[]>()
  for (const block of blocks.values())
    for (const scan of block.scans)
      out.set(scan.rv, inherited(scan) ? ROW_IDENTITY_COLUMNS : ['ctid'])
  return out
}

function inherited(scan: ConstrainedScan): boolean {
  return (scan.plan.table.table.descendants?.length ?? 0) > 0
}

/**
 * Rewrites the aggregating SELECTs `checkAggregation` accepted so that every group answered
 * draws on at least the policy's number of distinct rows of each constrained table, counted by
 * row identity so a join that repeats a row does not count it twice (docs/policies.md,
 * "Aggregation: exact rules"):
 *
 * - without GROUP BY, the single group is answered only when large enough (`HAVING`);
 * - with GROUP BY, as the union of the large groups and one remainder group: the rows of every
 *   group below the size, aggregated together with NULL keys (a grouping set `()` over them),
 *   answered only when it is large enough itself.
 *
 * The user's select list, HAVING and aggregates are kept as written: PostgreSQL still checks
 * that everything outside an aggregate is grouped.
 */
export function rewriteAggregations(
  query: AstNode,
  blocks: ReadonlyMap<object, AggregatingBlock>,
): AstNode {
  const rewriteSelect = (select: Pg.SelectStmt): Pg.SelectStmt => {
    // Nested aggregating SELECTs (in FROM, WHERE, the select list, set operation branches)
    // first; set operation branches are untagged SELECT bodies.
    const { larg, rarg, ...rest } = select
    const out = mapFields(rest, mapper) as Pg.SelectStmt
    if (larg) out.larg = rewriteSelect(larg)
    if (rarg) out.rarg = rewriteSelect(rarg)
    const block = blocks.get(select)
    return block ? rewriteBlock(out, block) : out
  }
  const mapper: NodeMapper = (_node, tag, body) =>
    tag === 'SelectStmt'
      ? ({ SelectStmt: rewriteSelect(body as Pg.SelectStmt) } as AstNode)
      : undefined
  return mapTree(query, mapper)
}

function rewriteBlock(select: Pg.SelectStmt, block: AggregatingBlock): Pg.SelectStmt {
  const guards = and(...block.scans.map(sizeGuard)) as AstNode
  const keys = groupKeys(select, block)
  if (keys.length === 0) return { ...select, havingClause: and(select.havingClause, guards) }

  // Row-value text compares NULLs as equal, as grouping does, and hashes.
  const keyText = typeCast(
    { RowExpr: { args: keys, row_format: 'COERCE_EXPLICIT_CALL' } } as AstNode,
    ['pg_catalog', 'text'],
  )
  const largeGroups: Pg.SelectStmt = {
    targetList: [resTarget(keyText)],
    fromClause: select.fromClause,
    whereClause: select.whereClause,
    groupClause: keys,
    havingClause: guards,
    limitOption: 'LIMIT_OPTION_DEFAULT',
    op: 'SETOP_NONE',
  }
  const inLarge = {
    SubLink: {
      subLinkType: 'ANY_SUBLINK',
      testexpr: keyText,
      subselect: { SelectStmt: largeGroups },
    },
  } as AstNode
  const { withClause, sortClause, limitCount, limitOffset, limitOption, ...branch } = select
  const large: Pg.SelectStmt = {
    ...branch,
    whereClause: and(select.whereClause, inLarge),
    groupClause: keys,
    havingClause: and(select.havingClause, guards),
    limitOption: 'LIMIT_OPTION_DEFAULT',
  }
  const keySet =
    keys.length === 1 ? keys[0] : { RowExpr: { args: keys, row_format: 'COERCE_IMPLICIT_CAST' } }
  const remainder: Pg.SelectStmt = {
    ...branch,
    whereClause: and(select.whereClause, {
      BoolExpr: { boolop: 'NOT_EXPR', args: [inLarge] },
    } as AstNode),
    groupClause: [
      {
        GroupingSet: {
          kind: 'GROUPING_SET_SETS',
          content: [keySet, { GroupingSet: { kind: 'GROUPING_SET_EMPTY' } }],
        },
      } as AstNode,
    ],
    // Only the `()` set: its keys are NULL; the per-group rows are what was too small.
    havingClause: and(
      select.havingClause,
      guards,
      builtinOp('<>', { GroupingFunc: { args: keys } } as AstNode, numberConst(0)),
    ),
    limitOption: 'LIMIT_OPTION_DEFAULT',
  }
  const union: Pg.SelectStmt = {
    op: 'SETOP_UNION',
    all: true,
    larg: large,
    rarg: remainder,
    limitOption: limitOption ?? 'LIMIT_OPTION_DEFAULT',
  }
  if (withClause) union.withClause = withClause
  if (sortClause) union.sortClause = sortClause.map((item) => outputSort(item, select))
  if (limitCount) union.limitCount = limitCount
  if (limitOffset) union.limitOffset = limitOffset
  return union
}

/** `count(DISTINCT <row identity>) >= N` for one constrained scan. */
function sizeGuard(scan: ConstrainedScan): AstNode {
  // ctid alone identifies a row of one table; a parent's scan reads several.
  const identity = inherited(scan)
    ? ({
        RowExpr: {
          args: ROW_IDENTITY_COLUMNS.map((c) => columnRef(scan.alias, c)),
          row_format: 'COERCE_EXPLICIT_CALL',
        },
      } as AstNode)
    : columnRef(scan.alias, 'ctid')
  const count = {
    FuncCall: {
      funcname: [stringNode('pg_catalog'), stringNode('count')],
      args: [identity],
      agg_distinct: true,
      funcformat: 'COERCE_EXPLICIT_CALL',
    },
  } as AstNode
  return builtinOp('>=', count, numberConst(scan.rule.minGroupSize))
}

/**
 * The GROUP BY items as expressions: an output position or an output name becomes the select
 * list expression it stands for (PostgreSQL takes a FROM column of the same name first).
 */
function groupKeys(select: Pg.SelectStmt, block: AggregatingBlock): AstNode[] {
  const targets = (select.targetList ?? []).map((t) => bodyOf<Pg.ResTarget>(t, 'ResTarget'))
  const keys: AstNode[] = []
  for (const item of select.groupClause ?? []) {
    if (bodyOf<Pg.GroupingSet>(item, 'GroupingSet')) continue
    const position = bodyOf<Pg.A_Const>(item, 'A_Const')?.ival
    if (position !== undefined) {
      const target = targets[(position.ival ?? 0) - 1]
      if (!target?.val) throw new PolicyDeniedError('GROUP BY position is not in the select list')
      keys.push(target.val)
      continue
    }
    const names = stringsOf(bodyOf<Pg.ColumnRef>(item, 'ColumnRef')?.fields)
    const name = names.length === 1 ? names[0] : undefined
    const output =
      name === undefined || block.scans.some((s) => s.plan.columns.includes(name))
        ? undefined
        : targets.find((t) => t?.name === name)
    keys.push((output?.val ?? item) as AstNode)
  }
  return keys
}

/**
 * An ORDER BY item of the grouped SELECT as the union orders: by output position or name. An
 * expression is matched to the select list item that computes it.
 */
function outputSort(item: AstNode, select: Pg.SelectStmt): AstNode {
  const sort = bodyOf<Pg.SortBy>(item, 'SortBy')
  const node = sort?.node
  if (!sort || !node || bodyOf<Pg.A_Const>(node, 'A_Const')?.ival !== undefined) return item
  const targets = select.targetList ?? []
  const names = stringsOf(bodyOf<Pg.ColumnRef>(node, 'ColumnRef')?.fields)
  const shape = withoutLocations(node)
  for (let i = 0; i < targets.length; i++) {
    const target = bodyOf<Pg.ResTarget>(targets[i], 'ResTarget')
    if (!target?.val) continue
    const named = names.length === 1 && target.name === names[0]
    if (named || withoutLocations(target.val) === shape)
      return { SortBy: { ...sort, node: numberConst(i + 1) } } as AstNode
  }
  throw new PolicyDeniedError(
    'aggregation policy: in a grouped statement over the table, ORDER BY must name an output column',
  )
}

function withoutLocations(node: unknown): string {
  return JSON.stringify(node, (key, value) => (key === 'location' ? undefined : value))
}
