import {
  deparseStatement,
  expressionFragment,
  expressionText,
  statementFragment,
  targetListFragment,
} from '../ast/deparse.js'
import { type AstNode, and, columnRef, rangeVar, resTarget, selectStmt } from '../ast/node.js'
import type { CatalogTable, RelationName } from '../catalog.types.js'
import { AccessRulesError, isPalisadeError, type PalisadeError } from '../errors.js'
import {
  type BindEnvironment,
  type BindTarget,
  bindFilter,
  bindMask,
} from '../policy/bind-expression.js'
import type { AppliedPolicy, EffectivePolicy } from '../policy/policy.types.js'
import { targetsMatchLineage } from '../policy/target-pattern.js'
import type { AccessMode } from '../session-context.types.js'
import type { InheritedScan } from './inheritance-plan.js'
import type { PolicyOutcome, PolicyRuntime, TablePolicies } from './policy-runtime.js'

/** An exposed upstream table with the schema name users see. */
export interface ExposedTable {
  /** Upstream schema name; policies match it. */
  readonly schema: string
  /** The schema's alias, or its upstream name. */
  readonly visibleSchema: string
  readonly table: CatalogTable
  readonly name: string
}

/** Pre-deparsed parts of a scan plan, spliced by the deparser as text it produced itself. */
export interface ScanFragments {
  readonly body: AstNode
  readonly targets: AstNode
  readonly where: AstNode | undefined
  /** `SELECT <visible, masked> FROM schema.table`, for bodies that add user conjuncts. */
  readonly head: string
  /** The row filters as text, or undefined without a filter. */
  readonly whereText: string | undefined
}

/** How one table is read by this session: the derived table that replaces every scan of it. */
export interface ScanPlan {
  readonly table: ExposedTable
  /** Visible columns in table order. */
  readonly columns: readonly string[]
  /** Columns of the table that this session may not see. */
  readonly denied: ReadonlySet<string>
  /** Visible columns whose values are masked. */
  readonly masked: ReadonlySet<string>
  /** Visible columns a projection policy keeps out of every output column. */
  readonly projected: ReadonlySet<string>
  /** Set when an aggregation policy fires: the table is read only through aggregates. */
  readonly aggregation: AggregationRule | undefined
  /**
   * `SELECT <visible, masked> FROM schema.table WHERE <filters> [OFFSET 0]`, deparsed once per
   * session: the whole body, its select list and its filter. Undefined when `error` is set.
   */
  readonly fragments: ScanFragments | undefined
  /** Set when the rules for this table cannot be applied; raised when a query reads it. */
  readonly error: PalisadeError | undefined
  /** Whether a row filter applies (and so the scan is fenced). */
  readonly filtered: boolean
  readonly applied: readonly AppliedPolicy[]
  /** The select list and filter as trees, for building inheritance branches. */
  readonly tree?: { readonly targets: readonly AstNode[]; readonly where: AstNode | undefined }
  /**
   * Set when descendants have policies of their own: a scan without `ONLY` reads each group of
   * rows under its own policies (inheritance-plan.ts).
   */
  readonly inheritance?: InheritedScan | undefined
}

/** What the aggregation policies that fire for one table demand together. */
export interface AggregationRule {
  /** The largest `min_group_size` of the firing policies. */
  readonly minGroupSize: number
  /** Value-revealing aggregates every firing policy allows (lowercase names). */
  readonly allowedAggregates: ReadonlySet<string>
}

/**
 * Builds the scan plan of one table from the policies that fire for it, or null when the
 * table is hidden (table_deny, or no column_allow in policy_required mode).
 * Deny wins over permit (rule 2), deny wins over mask (rule 5), the lowest-priority mask wins
 * (rule 3), row filters are ANDed on raw values (rules 1, 6).
 */
export function buildScanPlan(
  table: ExposedTable,
  policies: TablePolicies,
  fires: (runtime: PolicyRuntime) => PolicyOutcome,
  accessMode: AccessMode,
  env: BindEnvironment,
  qualifier: string = table.name,
): ScanPlan | null {
  const applied: AppliedPolicy[] = []
  const note = (runtime: PolicyRuntime): boolean => {
    const outcome = fires(runtime)
    if (outcome.fire || outcome.decision) applied.push(runtime.applied(outcome))
    return outcome.fire
  }
  const schema = table.schema
  const tableName = table.name
  const lineage = lineageOf(table)
  const columns = visibleColumnsOf(table, policies, note, accessMode)
  if (!columns) return null
  const allColumns = table.table.columns.map((c) => c.name)
  const visible = new Set(columns)
  const denied = new Set(allColumns.filter((c) => !visible.has(c)))
  const masks = policies.masks.filter((p) => note(p))
  const filters = policies.rowFilters.filter((p) => note(p))
  const aggregation = aggregationRule(policies.aggregations.filter((p) => note(p)))
  const projected = new Set(
    policies.projections
      .filter((p) => note(p))
      .flatMap((p) => columns.filter((column) => columnMatches(p, lineage, column))),
  )
  const target: BindTarget = {
    qualifier,
    schema,
    table: tableName,
    columns: new Set(allColumns),
  }
  const masked = new Set<string>()
  // Types of masked columns (library masks cast to them), indexed only when the table has masks.
  const typeOf =
    masks.length > 0 ? new Map(table.table.columns.map((c) => [c.name, c.type])) : undefined
  try {
    const targets = columns.map((column) => {
      const mask = lowestPriorityMask(masks, lineage, column)
      if (!mask) return resTarget(columnRef(qualifier, column))
      masked.add(column)
      if (!mask.mask)
        throw new AccessRulesError(`mask expression on ${schema}.${tableName} is invalid`)
      const type = typeOf?.get(column) ?? 'text'
      return resTarget(bindMask(mask.mask, target, env, { name: column, type }), column)
    })
    const where = and(...filters.map((p) => bindFilter(p.requireFilter(), target, env)))
    const from = rangeVar(schema, tableName, qualifier === tableName ? undefined : qualifier)
    const subquery = selectStmt({
      targets,
      from: [from],
      where,
      fence: where !== undefined,
    })
    const fragments: ScanFragments = {
      body: statementFragment(subquery),
      targets: targetListFragment(targets),
      where: where === undefined ? undefined : expressionFragment(where),
      head: deparseStatement(selectStmt({ targets, from: [from] })),
      whereText: where === undefined ? undefined : expressionText(where),
    }
    const filtered = where !== undefined
    return {
      table,
      columns,
      denied,
      masked,
      projected,
      aggregation,
      fragments,
      error: undefined,
      filtered,
      applied,
      tree: { targets, where },
    }
  } catch (error) {
    if (!isPalisadeError(error)) throw error
    return {
      table,
      columns,
      denied,
      masked,
      projected,
      aggregation,
      fragments: undefined,
      error,
      filtered: true,
      applied,
    }
  }
}

/**
 * Several aggregation policies on one table: the strictest holds, so the largest group size
 * and only the aggregates every one of them allows.
 */
function aggregationRule(firing: readonly PolicyRuntime[]): AggregationRule | undefined {
  if (firing.length === 0) return undefined
  let minGroupSize = 2
  let allowed: Set<string> | undefined
  for (const { policy } of firing) {
    minGroupSize = Math.max(minGroupSize, policy.minGroupSize ?? 2)
    const own = new Set((policy.allowedAggregates ?? []).map((name) => name.toLowerCase()))
    allowed = allowed ? new Set([...allowed].filter((name) => own.has(name))) : own
  }
  return { minGroupSize, allowedAggregates: allowed ?? new Set() }
}

/** Column targets name the table or an ancestor's same-named column (children have them all). */
function lineageOf(table: ExposedTable): RelationName[] {
  return [{ schema: table.schema, table: table.name }, ...(table.table.ancestors ?? [])]
}

/**
 * The columns of a table a session sees, in table order, or null when the table is hidden
 * (table_deny, or no column_allow in policy_required mode). `fired` is asked about the hiding
 * policies only, so a catalog listing learns what it shows without binding any filter or mask.
 */
export function visibleColumnsOf(
  table: ExposedTable,
  policies: TablePolicies,
  fired: (runtime: PolicyRuntime) => boolean,
  accessMode: AccessMode,
): string[] | null {
  if (policies.tableDenies.filter((p) => fired(p)).length > 0) return null
  const allows = policies.allows.filter((p) => fired(p))
  if (accessMode === 'policy_required' && allows.length === 0) return null
  const denies = policies.columnDenies.filter((p) => fired(p))
  const lineage = lineageOf(table)
  return table.table.columns
    .map((c) => c.name)
    .filter(
      (column) =>
        (allows.length === 0 || allows.some((p) => columnMatches(p, lineage, column))) &&
        !denies.some((p) => columnMatches(p, lineage, column)),
    )
}

function columnMatches(
  p: PolicyRuntime,
  lineage: readonly RelationName[],
  column: string,
): boolean {
  return targetsMatchLineage(p.policy.targets, lineage, column)
}

function lowestPriorityMask(
  masks: readonly PolicyRuntime[],
  lineage: readonly RelationName[],
  column: string,
): PolicyRuntime | undefined {
  let best: PolicyRuntime | undefined
  for (const mask of masks) {
    if (!columnMatches(mask, lineage, column)) continue
    if (!best || maskOrder(mask.policy, best.policy) < 0) best = mask
  }
  return best
}

const SCOPE_RANK = { user: 0, role: 1, all: 2 } as const

/**
 * Which of two masks on one column applies (docs/rules.md rule 3, docs/roles-and-access.md#policy-assignments): the lower
 * priority, then the narrower scope (user, role, all), then the smaller assignment id; the
 * policy id only decides between hand-written policies that carry neither.
 */
function maskOrder(a: EffectivePolicy, b: EffectivePolicy): number {
  if (a.priority !== b.priority) return a.priority - b.priority
  const scope = SCOPE_RANK[a.scope ?? 'all'] - SCOPE_RANK[b.scope ?? 'all']
  if (scope !== 0) return scope
  const x = a.assignmentId ?? ''
  const y = b.assignmentId ?? ''
  if (x !== y) return x < y ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}
