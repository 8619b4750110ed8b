import { conjuncts, joinConjuncts, normalizeExpression } from './plan-expressions.js'
import type { PlanPolicies, PolicedRelation } from './plan-policies.js'

/** One node of PostgreSQL's JSON plan. */
export type PlanNode = Record<string, unknown>

/** What replaces injected row-filter conjuncts and mask expressions. */
export const ROW_POLICY_MARKER = '(row policy)'
export const MASK_MARKER = '(masked)'

/** Keys holding the conditions of a scan: where a row filter lands. */
const SCAN_CONDITIONS = ['Index Cond', 'Recheck Cond', 'TID Cond', 'Filter', 'One-Time Filter']
/** Children that compute parts of an expression rather than the node's rows. */
const EXPRESSION_CHILDREN = new Set(['InitPlan', 'SubPlan'])
const NOTHING_KEPT: ReadonlySet<string> = new Set()
/** Keys that name things rather than hold expressions. */
const NAME_KEYS = new Set([
  'Node Type',
  'Parent Relationship',
  'Subplan Name',
  'Relation Name',
  'Schema',
  'Alias',
  'Index Name',
  'CTE Name',
  'Strategy',
  'Partial Mode',
  'Join Type',
  'Scan Direction',
  'Operation',
  'Command',
])

/**
 * Redacts a plan of a rewritten statement: each fence (the subquery scan around a filtered
 * table) collapses into the scan it guards, keeping the fence's alias, output and estimates;
 * the conditions a row filter put on a scan become `(row policy)`, where the user's own
 * copies of them are kept; the filter's subplans go; mask expressions become `(masked)` and
 * aliased schemas show their alias.
 */
export function redactPlan(node: PlanNode, policies: PlanPolicies): PlanNode {
  const masks = policies.masks
    .map(normalizeExpression)
    .filter((mask) => mask.length >= 3 && mask !== 'null' && !/^[a-z_][a-z0-9_$]*$/.test(mask))
  const aliases = new Map(policies.schemaAliases)
  const policed = (n: PlanNode) => policedRelation(n, policies.relations)

  const finish = (n: PlanNode): PlanNode => {
    const out: PlanNode = {}
    for (const [key, value] of Object.entries(n)) {
      if (key === 'Plans') out[key] = (value as PlanNode[]).map(visit)
      else if (key === 'Schema' && typeof value === 'string') out[key] = aliases.get(value) ?? value
      else if (NAME_KEYS.has(key)) out[key] = value
      else out[key] = masks.length > 0 ? maskValue(value, masks) : value
    }
    return out
  }

  const visit = (n: PlanNode): PlanNode => {
    if (n['Node Type'] === 'Subquery Scan') {
      const guarded = guardedScan(n, policed)
      if (guarded) return finish(collapse(n, guarded))
    }
    const relation = policed(n)
    if (relation?.filtered) return finish(redactScan(n, NOTHING_KEPT, true))
    return finish(n)
  }
  return visit(node)
}

/**
 * The fence's scan: the filtered table's scan right under a subquery scan, or under a chain of
 * single-input nodes (a Result the filter left). A subquery scan over a join is the user's.
 */
function guardedScan(
  fence: PlanNode,
  policed: (n: PlanNode) => PolicedRelation | undefined,
): PlanNode | undefined {
  let n: PlanNode = fence
  for (;;) {
    const inputs = childPlans(n).filter(
      (child) => !EXPRESSION_CHILDREN.has(child['Parent Relationship'] as string),
    )
    const [only] = inputs
    if (inputs.length !== 1 || !only || only['Node Type'] === 'Subquery Scan') return undefined
    if (policed(only)?.filtered) return only
    n = only
  }
}

/** The fence and its scan as one node: the scan's shape with the fence's place and estimates. */
function collapse(fence: PlanNode, scan: PlanNode): PlanNode {
  const user = typeof fence['Filter'] === 'string' ? conjuncts(fence['Filter']) : []
  const keep = new Set(user.map(normalizeExpression))
  const inner = redactScan(scan, keep, false)
  const out: PlanNode = {}
  for (const [key, value] of Object.entries(inner)) {
    if (key === 'Parent Relationship' || key === 'Subplan Name') continue
    out[key] = value
  }
  for (const key of ['Parent Relationship', 'Subplan Name']) {
    if (fence[key] !== undefined) out[key] = fence[key]
  }
  for (const key of ['Alias', 'Startup Cost', 'Total Cost', 'Plan Rows', 'Plan Width']) {
    if (fence[key] !== undefined) out[key] = fence[key]
  }
  // Subplans of the fence's own (user's) conditions stay beside the scan's children.
  const userPlans = childPlans(fence).filter((child) =>
    EXPRESSION_CHILDREN.has(child['Parent Relationship'] as string),
  )
  if (userPlans.length > 0) out['Plans'] = [...childPlans(inner), ...userPlans]
  if (fence['Output'] !== undefined) out['Output'] = fence['Output']
  else delete out['Output']
  const marked = typeof inner['Filter'] === 'string' && inner['Filter'].includes(ROW_POLICY_MARKER)
  const filter = [...user, ...(marked ? [ROW_POLICY_MARKER] : [])]
  // The user's conditions, checked above the fence; a marker for what the filter adds.
  if (filter.length > 0) out['Filter'] = joinConjuncts(dedupe(filter))
  else delete out['Filter']
  return out
}

/**
 * A filtered table's scan with its injected conjuncts replaced by one marker (conjuncts equal
 * to one in `keep`, the user's own, stay) and the filter's subplans removed. `placeholders`:
 * without a fence node the scan prints the derived table's list, unused columns as NULLs.
 */
function redactScan(scan: PlanNode, keep: ReadonlySet<string>, placeholders: boolean): PlanNode {
  const out: PlanNode = { ...scan }
  for (const key of SCAN_CONDITIONS) {
    const value = scan[key]
    if (typeof value !== 'string') continue
    const parts = conjuncts(value)
    const kept = parts.filter((part) => keep.has(normalizeExpression(part)))
    out[key] = joinConjuncts(kept.length < parts.length ? [...kept, ROW_POLICY_MARKER] : kept)
  }
  if (placeholders && Array.isArray(scan['Output'])) {
    out['Output'] = (scan['Output'] as string[]).filter((item) => !/^NULL::/.test(item))
  }
  const plans = childPlans(scan)
  if (plans.length > 0 || scan['Plans'] !== undefined) {
    const rest = plans
      .filter((child) => !EXPRESSION_CHILDREN.has(child['Parent Relationship'] as string))
      .map((child) => redactScan(child, keep, false))
    if (rest.length > 0) out['Plans'] = rest
    else delete out['Plans']
  }
  return out
}

function policedRelation(
  node: PlanNode,
  relations: readonly PolicedRelation[],
): PolicedRelation | undefined {
  const table = node['Relation Name']
  if (typeof table !== 'string') return undefined
  const schema = node['Schema']
  return relations.find(
    (r) => r.table === table && (typeof schema !== 'string' || r.schema === schema),
  )
}

function childPlans(node: PlanNode): PlanNode[] {
  return Array.isArray(node['Plans']) ? (node['Plans'] as PlanNode[]) : []
}

/** An expression value with every item or conjunct that computes a mask replaced. */
function maskValue(value: unknown, masks: readonly string[]): unknown {
  const hides = (text: string) => {
    const normal = normalizeExpression(text)
    return masks.some((mask) => normal.includes(mask))
  }
  if (typeof value === 'string') {
    if (!hides(value)) return value
    const parts = conjuncts(value)
    return joinConjuncts(dedupe(parts.map((part) => (hides(part) ? MASK_MARKER : part))))
  }
  if (Array.isArray(value)) {
    return value.map((item) =>
      typeof item === 'string' ? (hides(item) ? MASK_MARKER : item) : maskValue(item, masks),
    )
  }
  return value
}

function dedupe(parts: readonly string[]): string[] {
  return [...new Set(parts)]
}
