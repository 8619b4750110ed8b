import { expressionText, targetListFragment } from '../ast/deparse.js'
import { type AstNode, nullConst, resTarget } from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import { nodeBody } from '../ast/tag-dispatch.js'
import type { RelationName } from '../catalog.types.js'
import type { BindEnvironment } from '../policy/bind-expression.js'
import type { AppliedPolicy } from '../policy/policy.types.js'
import { targetsMatchLineage } from '../policy/target-pattern.js'
import type { AccessMode } from '../session-context.types.js'
import type { PolicyOutcome, PolicyRuntime, TablePolicies } from './policy-runtime.js'
import { buildScanPlan, type ExposedTable, type ScanPlan } from './scan-plan.js'

/** A table below another (a partition or inheritance child, however deep) and its policies. */
export interface DescendantEntry {
  /** The descendant as a table; an unexposed one carries its parent's columns. */
  readonly exposed: ExposedTable
  readonly policies: TablePolicies
}

/** One group of a parent's rows, read under one plan, in the parent's column order. */
export interface InheritanceBranch {
  readonly schema: string
  readonly table: string
  /** A descendant's branch reads only its own rows (`FROM ONLY`). */
  readonly only: boolean
  /**
   * The parent's branch: the relations whose rows the parent's own plan governs, kept by
   * `tableoid` (the parent alone is read with `ONLY` instead).
   */
  readonly members: readonly RelationName[] | undefined
  /** The parent's visible columns, each read, masked, or NULL where the branch denies it. */
  readonly targets: readonly AstNode[]
  readonly where: AstNode | undefined
  /** Columns a user's leakproof conjunct may be copied onto: visible and unmasked here. */
  readonly plain: ReadonlySet<string>
}

/** How a parent scan reads descendants that have policies of their own. */
export interface InheritedScan {
  readonly branches: readonly InheritanceBranch[]
}

/**
 * Adds to a parent's plan the branches that keep every descendant's policies on its rows
 * (docs/policies.md#inheritance-children-and-partitions). A descendant whose policies give the
 * same select list and filter as the parent's stays in the parent's branch; one that differs
 * gets its own branch; one the user may not see (table deny) contributes no rows. Descendants
 * the catalog does not list are left out once any branch exists: their policies are unknown.
 */
export function withInheritance(
  plan: ScanPlan | null,
  parentPolicies: TablePolicies,
  descendants: readonly DescendantEntry[] | undefined,
  fires: (runtime: PolicyRuntime) => PolicyOutcome,
  accessMode: AccessMode,
  env: BindEnvironment,
): ScanPlan | null {
  if (!plan?.tree || !descendants || descendants.length === 0) return plan
  const parent = plan.table
  const lineage = [{ schema: parent.schema, table: parent.name }, ...(parent.table.ancestors ?? [])]
  const signature = branchSignature(plan.tree.targets, plan.tree.where)
  const members: RelationName[] = [{ schema: parent.schema, table: parent.name }]
  const branches: InheritanceBranch[] = []
  const applied = new Map<string, AppliedPolicy>(plan.applied.map((a) => [a.policy_id, a]))
  const masked = new Set(plan.masked)
  // A child's projection policies constrain the parent's scan too: its rows are in it.
  const projected = new Set(plan.projected)
  let separate = false
  for (const child of descendants) {
    const name = { schema: child.exposed.schema, table: child.exposed.name }
    if (sharesParentRules(child, lineage, plan.columns, parentPolicies)) {
      members.push(name)
      continue
    }
    const own = buildScanPlan(child.exposed, child.policies, fires, accessMode, env, parent.name)
    for (const a of own?.applied ?? []) if (!applied.has(a.policy_id)) applied.set(a.policy_id, a)
    // Hidden from this user: its rows are in no branch.
    if (!own) {
      separate = true
      continue
    }
    if (own.error || !own.tree) return { ...plan, fragments: undefined, error: own.error }
    for (const column of own.projected) if (plan.columns.includes(column)) projected.add(column)
    const byColumn = new Map(own.columns.map((c, i) => [c, own.tree?.targets[i] as AstNode]))
    const types = new Map(parent.table.columns.map((c) => [c.name, c.type]))
    const plain = new Set<string>()
    const targets = plan.columns.map((column) => {
      const target = byColumn.get(column)
      if (target && !own.masked.has(column)) plain.add(column)
      else masked.add(column)
      return target ?? resTarget(typedNull(types.get(column)), column)
    })
    if (branchSignature(targets, own.tree.where) === signature) {
      members.push(name)
      continue
    }
    separate = true
    branches.push({
      ...name,
      only: true,
      members: undefined,
      targets,
      where: own.tree.where,
      plain,
    })
  }
  if (!separate) return projected.size === plan.projected.size ? plan : { ...plan, projected }
  const parentPlain = new Set(plan.columns.filter((c) => !plan.masked.has(c)))
  const parentBranch: InheritanceBranch = {
    schema: parent.schema,
    table: parent.name,
    only: members.length === 1,
    members: members.length === 1 ? undefined : members,
    targets: plan.tree.targets,
    where: plan.tree.where,
    plain: parentPlain,
  }
  return {
    ...plan,
    masked,
    projected,
    filtered: plan.filtered || branches.some((b) => b.where !== undefined),
    applied: [...applied.values()],
    inheritance: { branches: [parentBranch, ...branches] },
  }
}

/**
 * A descendant whose policies all reach it through the parent's lineage, and which has every
 * column the parent shows, is read exactly as the parent is.
 */
function sharesParentRules(
  child: DescendantEntry,
  parentLineage: readonly RelationName[],
  parentColumns: readonly string[],
  parentPolicies: TablePolicies,
): boolean {
  const childLineage = [
    { schema: child.exposed.schema, table: child.exposed.name },
    ...(child.exposed.table.ancestors ?? []),
  ]
  const own = childLineage.filter(
    (r) => !parentLineage.some((p) => p.schema === r.schema && p.table === r.table),
  )
  const lists = Object.values(child.policies) as PolicyRuntime[][]
  if (lists.some((list) => list.some((p) => targetsMatchLineage(p.policy.targets, own))))
    return false
  const parentCount = Object.values(parentPolicies).reduce((n, l) => n + l.length, 0)
  if (lists.reduce((n, l) => n + l.length, 0) !== parentCount) return false
  const columns = new Set(child.exposed.table.columns.map((c) => c.name))
  return parentColumns.every((c) => columns.has(c))
}

function branchSignature(targets: readonly AstNode[], where: AstNode | undefined): string {
  const list = (targetListFragment(targets) as { PalisadeFragment?: { sql: string } })
    .PalisadeFragment?.sql
  return `${list ?? ''}\u0000${where === undefined ? '' : expressionText(where)}`
}

const NULLS = new Map<string, AstNode>()

/** `CAST(NULL AS type)` for a column a branch denies, so every branch agrees on its type. */
function typedNull(type: string | undefined): AstNode {
  if (type === undefined) return nullConst()
  let value = NULLS.get(type)
  if (!value) {
    try {
      const [statement] = parseSql(`SELECT CAST(NULL AS ${type})`)
      const select = nodeBody(statement?.stmt, 'SelectStmt')
      value = (nodeBody(select?.targetList?.[0], 'ResTarget')?.val as AstNode) ?? nullConst()
    } catch {
      value = nullConst()
    }
    NULLS.set(type, value)
  }
  return value
}
