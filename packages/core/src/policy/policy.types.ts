/** The policy types (docs/policies.md#each-type-with-an-example). */
export const PolicyType = {
  RowFilter: 'row_filter',
  ColumnMask: 'column_mask',
  ColumnAllow: 'column_allow',
  ColumnDeny: 'column_deny',
  TableDeny: 'table_deny',
  /** The table is read only through aggregates over groups of at least `minGroupSize` rows. */
  Aggregation: 'aggregation',
  /** The target columns may filter, join and group, never reach an output column. */
  Projection: 'projection',
} as const
export type PolicyType = (typeof PolicyType)[keyof typeof PolicyType]

/** One target entry; entries of a policy are ORed (docs/resources.md#policies). Patterns follow docs/rules.md rule 10. */
export interface PolicyTarget {
  schemas: readonly string[]
  tables: readonly string[]
  columns?: readonly string[] | null
  /**
   * Catalog tags the target covers (docs/policies.md, "Tags"): with them, the name patterns only
   * narrow, and a session expands the target into the objects carrying a matching tag.
   */
  tags?: readonly string[] | null
}

/** How a policy's decision function is attached, as the session compiler needs it. */
export interface DecisionBinding {
  functionId: string
  name: string
  /** Bumped on every save; with `functionId` it keys the artifact cache. */
  version?: number
  /** Stored artifact from `compileDecisionFunction`; null means "fires" (docs/decision-functions.md). */
  artifact: string | null
  config: unknown
  evaluateContext: 'session' | 'query'
  onError: 'deny' | 'skip'
  logLevel: 'off' | 'error' | 'info'
  isEnabled: boolean
}

/**
 * A policy as it reaches one session: already deduplicated by id with the lowest
 * priority kept (docs/rules.md rule 4) and enabled (disabled policies are not passed in).
 */
export interface EffectivePolicy {
  id: string
  name: string
  version: number
  type: PolicyType
  targets: readonly PolicyTarget[]
  filterExpression?: string | null
  maskExpression?: string | null
  /** `aggregation` only: the fewest rows of the table a returned group may draw on (≥ 2). */
  minGroupSize?: number | null
  /**
   * `aggregation` only: aggregates that hand back an individual value (`min`, `max`,
   * `array_agg`, …) the policy allows over the table's columns, by lowercase name.
   */
  allowedAggregates?: readonly string[] | null
  /** Lower wins among masks on one column (docs/rules.md rule 3). */
  priority: number
  /**
   * The scope of the assignment that reaches the user (the winning one when several do): at
   * equal priority `user` beats `role` beats `all` (docs/roles-and-access.md#policy-assignments). Absent counts as `all`.
   */
  scope?: 'user' | 'role' | 'all'
  /** That assignment's id: the last tie-break among masks at equal priority and scope. */
  assignmentId?: string
  decision?: DecisionBinding | null
  /**
   * `shadow`: evaluated for every statement like an enforced policy and recorded in the query
   * audit, never applied (docs/policies.md, "Shadow mode"). Absent means `enforce`.
   */
  enforcement?: 'enforce' | 'shadow'
}

/**
 * A decision function's run as the query audit records it (admin-api.md, query audit): `fire`
 * after `on_error`, the fuel and time it used, its captured console lines, and its error.
 */
export interface DecisionRecord {
  result: { fire: boolean; fuel_consumed: number; time_us: number }
  logs: string[]
  error: string | null
}

/** What the audit records for each policy considered by a statement (docs/audit.md#query-audit). */
export interface AppliedPolicy {
  policy_id: string
  version: number
  name: string
  /** Null when no decision function ran (none attached, disabled, or no module: it fired). */
  decision: DecisionRecord | null
}
