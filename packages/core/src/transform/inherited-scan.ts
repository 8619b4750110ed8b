import type { PushdownCandidate } from '../analyze/leakproof-conjuncts.js'
import { statementFragment } from '../ast/deparse.js'
import {
  type AstNode,
  and,
  columnRef,
  type Pg,
  rangeSubselect,
  rangeVar,
  resTarget,
  selectStmt,
  stringConst,
  stringNode,
  typeCast,
} from '../ast/node.js'
import { taggedBody } from '../ast/tag-dispatch.js'
import type { RelationName } from '../catalog.types.js'
import type { InheritanceBranch, InheritedScan } from '../session/inheritance-plan.js'
import type { ScanPlan } from '../session/scan-plan.js'
import { copyConjuncts } from './inner-scan.js'

/** The plain body of each inherited scan, deparsed once per plan. */
const plainBodies = new WeakMap<InheritedScan, AstNode>()

/**
 * The derived table of a parent scan whose descendants have policies of their own: each
 * branch reads its rows under its own plan, in the parent's column order,
 * `SELECT … FROM (<branch> UNION ALL <branch> …) AS parent [OFFSET 0]`. The fence keeps every
 * user predicate above all branches; leakproof conjuncts are copied into the branches where
 * their column is visible and unmasked. System columns and `TABLESAMPLE` go to every branch.
 */
export function inheritedScan(
  plan: ScanPlan,
  inheritance: InheritedScan,
  sample: Pg.RangeTableSample | undefined,
  candidates: readonly PushdownCandidate[] | undefined,
  system: readonly string[],
): AstNode {
  const plain = !sample && system.length === 0 && (!plan.filtered || !candidates?.length)
  if (plain) {
    const cached = plainBodies.get(inheritance)
    if (cached) return cached
  }
  const alias = plan.table.name
  const branches = inheritance.branches.map((branch) => {
    const pushed = plan.filtered
      ? copyConjuncts(candidates, alias, (column) => branch.plain.has(column))
      : []
    return branchSelect(branch, alias, sample, pushed, system)
  })
  const union = branches.reduce((left, right) => ({
    SelectStmt: {
      op: 'SETOP_UNION',
      all: true,
      larg: taggedBody(left, 'SelectStmt'),
      rarg: taggedBody(right, 'SelectStmt'),
      limitOption: 'LIMIT_OPTION_DEFAULT',
    },
  })) as AstNode
  const body = selectStmt({
    targets: [...plan.columns, ...system].map((c) => resTarget(columnRef(alias, c))),
    from: [rangeSubselect(union, { aliasname: alias })],
    fence: plan.filtered,
  })
  if (!plain) return body
  const fragment = statementFragment(body)
  plainBodies.set(inheritance, fragment)
  return fragment
}

function branchSelect(
  branch: InheritanceBranch,
  alias: string,
  sample: Pg.RangeTableSample | undefined,
  pushed: readonly AstNode[],
  system: readonly string[],
): AstNode {
  let scan = rangeVar(branch.schema, branch.table, alias)
  if (branch.only) {
    // The deparser prints ONLY for a RangeVar without `inh`, as the parser gives it.
    const { inh: _inh, ...rest } = taggedBody(scan, 'RangeVar')
    scan = { RangeVar: rest }
  }
  if (sample) scan = { RangeTableSample: { ...sample, relation: scan } }
  return selectStmt({
    targets: [...branch.targets, ...system.map((c) => resTarget(columnRef(alias, c)))],
    from: [scan],
    where: and(branch.where, membersOf(branch.members, alias), ...pushed),
  })
}

/** `alias.tableoid IN ('"s"."t"'::regclass, …)`: the rows of exactly these relations. */
function membersOf(
  members: readonly RelationName[] | undefined,
  alias: string,
): AstNode | undefined {
  if (!members) return undefined
  const items = members.map((m) =>
    typeCast(stringConst(`${quoted(m.schema)}.${quoted(m.table)}`), ['pg_catalog', 'regclass']),
  )
  return {
    A_Expr: {
      kind: 'AEXPR_IN',
      name: [stringNode('=')],
      lexpr: columnRef(alias, 'tableoid'),
      rexpr: { List: { items } },
    },
  } as AstNode
}

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`
