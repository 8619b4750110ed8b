import type { RelationName } from '../catalog.types.js'
import { AccessRulesError, isPalisadeError } from '../errors.js'
import type { AppliedPolicy, DecisionRecord, EffectivePolicy } from '../policy/policy.types.js'
import { type PolicyExpression, parsePolicyExpression } from '../policy/policy-expression.js'
import { targetsMatchLineage } from '../policy/target-pattern.js'

/**
 * Whether a policy fires, as far as the session knows: `fires`/`skipped` were settled at
 * compile time (no function, disabled function, or a session-context function), `query`
 * waits for the query-time decision.
 */
export type PolicyState = 'fires' | 'skipped' | 'query'

/** Whether a policy fired for one statement, with its decision function result if one ran. */
export interface PolicyOutcome {
  readonly fire: boolean
  readonly decision?: DecisionRecord | undefined
}

/** A policy prepared for one session: parsed expressions and its session-time decision. */
export class PolicyRuntime {
  readonly policy: EffectivePolicy
  readonly state: PolicyState
  /** The session-time decision function result, if one was evaluated (docs/audit.md#query-audit). */
  readonly decision: PolicyOutcome['decision']
  readonly filter: PolicyExpression | undefined
  readonly mask: PolicyExpression | undefined
  readonly #expressionError: string | undefined

  constructor(policy: EffectivePolicy, state: PolicyState, decision?: PolicyRuntime['decision']) {
    this.policy = policy
    this.state = state
    this.decision = decision
    let filter: PolicyExpression | undefined
    let mask: PolicyExpression | undefined
    let expressionError: string | undefined
    try {
      if (policy.type === 'row_filter') {
        filter = parsePolicyExpression(policy.filterExpression ?? '')
        if (filter.masks.length > 0) {
          filter = undefined
          throw new AccessRulesError('a row filter cannot call library masks')
        }
      }
      if (policy.type === 'column_mask') mask = parsePolicyExpression(policy.maskExpression ?? '')
    } catch (error) {
      // Stored expressions were validated at save time; one that no longer parses fails closed.
      expressionError = isPalisadeError(error) ? error.message : 'expression does not parse'
    }
    this.filter = filter
    this.mask = mask
    this.#expressionError = expressionError
  }

  /** The row filter, or an error that makes every scan of the table fail (never unfiltered). */
  requireFilter(): PolicyExpression {
    if (this.filter) return this.filter
    throw new AccessRulesError(
      `row filter expression is invalid: ${this.#expressionError ?? 'missing'}`,
    )
  }

  /** The outcome settled at compile time; undefined while a query-time decision is pending. */
  sessionOutcome(): PolicyOutcome | undefined {
    if (this.state === 'query') return undefined
    return { fire: this.state === 'fires', decision: this.decision }
  }

  /** The audit record of this policy for one statement. */
  applied(outcome: PolicyOutcome): AppliedPolicy {
    return {
      policy_id: this.policy.id,
      version: this.policy.version,
      name: this.policy.name,
      decision: outcome.decision ?? null,
    }
  }
}

/** The policies whose targets match one table, by type. */
export interface TablePolicies {
  readonly rowFilters: readonly PolicyRuntime[]
  readonly masks: readonly PolicyRuntime[]
  readonly allows: readonly PolicyRuntime[]
  readonly columnDenies: readonly PolicyRuntime[]
  readonly tableDenies: readonly PolicyRuntime[]
  readonly aggregations: readonly PolicyRuntime[]
  readonly projections: readonly PolicyRuntime[]
}

/**
 * Groups the policies that target a table (upstream schema name), or one of its `ancestors`
 * (inheritance parents, partitioned tables), by type.
 */
export function policiesForTable(
  runtimes: readonly PolicyRuntime[],
  schema: string,
  table: string,
  ancestors: readonly RelationName[] = [],
): TablePolicies {
  const lineage = [{ schema, table }, ...ancestors]
  const out = {
    rowFilters: [],
    masks: [],
    allows: [],
    columnDenies: [],
    tableDenies: [],
    aggregations: [],
    projections: [],
  } as {
    [K in keyof TablePolicies]: PolicyRuntime[]
  }
  for (const runtime of runtimes) {
    if (!targetsMatchLineage(runtime.policy.targets, lineage)) continue
    switch (runtime.policy.type) {
      case 'row_filter':
        out.rowFilters.push(runtime)
        break
      case 'column_mask':
        out.masks.push(runtime)
        break
      case 'column_allow':
        out.allows.push(runtime)
        break
      case 'column_deny':
        out.columnDenies.push(runtime)
        break
      case 'table_deny':
        out.tableDenies.push(runtime)
        break
      case 'aggregation':
        out.aggregations.push(runtime)
        break
      case 'projection':
        out.projections.push(runtime)
        break
    }
  }
  return out
}

/** Whether any policy of the table waits for a query-time decision. */
export function hasQueryDecisions(policies: TablePolicies): boolean {
  return Object.values(policies).some((list: readonly PolicyRuntime[]) =>
    list.some((p) => p.state === 'query'),
  )
}
