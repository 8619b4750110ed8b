/**
 * @module @palisade/core — policy-enforcing SQL rewrite for PostgreSQL.
 *
 * ```ts
 * import { compileSession, rewrite } from '@palisade/core'
 * const session = await compileSession(input)
 * const { statements } = rewrite('SELECT * FROM orders', session)
 * ```
 */

export type { QueryFacts } from './analyze/query-facts.js'
export { StatementKind } from './analyze/statement-classifier.js'
export { loadParser } from './ast/parse.js'
export type * from './catalog.types.js'
export * from './decision/index.js'
export * from './errors.js'
export { type ExplainPlanRequest, explainRows } from './explain/explain-output.js'
export type { ExplainFormat, ExplainOptions } from './explain/explain-request.js'
export type { PlanPolicies, PolicedRelation } from './explain/plan-policies.js'
export {
  checkStatementSize,
  DEFAULT_STATEMENT_LIMITS,
  RewritePool,
  type StatementLimits,
} from './isolation/rewrite-pool.js'
export type { LiteralParameters } from './literal-parameters.js'
export { fillTemplate, textTemplate } from './literal-template.js'
export { loadCore } from './load-core.js'
export { STATISTIC_AGGREGATES, VALUE_REVEALING_AGGREGATES } from './policy/aggregate-kinds.js'
export {
  type FilterColumnResolution,
  type FilterCoverageInput,
  type FilterTableCoverage,
  filterCoverage,
} from './policy/filter-coverage.js'
export { FUNCTION_ALLOWLIST, OPERATOR_ALLOWLIST } from './policy/function-allowlist.js'
export { MASK_NAMES, maskTypeProblem } from './policy/mask-library.js'
export * from './policy/policy.types.js'
export {
  COLUMN_POLICY_TYPES,
  expandTagTargets,
  MAX_TAG_LENGTH,
  TAG_PATTERN,
  tagMatches,
  tagTargetCoversColumn,
  withTargetDefaults,
} from './policy/tag-targets.js'
export { matchesPattern } from './policy/target-pattern.js'
export {
  MAX_ALLOWED_AGGREGATES,
  MIN_GROUP_SIZE,
  validateExpression,
  validatePolicy,
} from './policy/validate-policy.js'
export { type RewriteOptions, rewrite } from './rewrite.js'
export type * from './rewrite.types.js'
export { runtimeStats } from './runtime-stats.js'
export {
  type CompileOptions,
  compileSession,
  type DecisionLogSink,
} from './session/compile-session.js'
export type { CompiledSession } from './session/compiled-session.js'
export {
  describeCatalog,
  type VisibleColumn,
  type VisibleSchema,
  type VisibleTable,
} from './session/describe-catalog.js'
export { describeViews, type ViewDescription } from './session/describe-views.js'
export type * from './session-context.types.js'
export * from './sqlstate.js'
export {
  REDACTED_UPSTREAM_MESSAGE,
  type ScrubbedError,
  scrubUpstreamError,
  type UpstreamErrorFields,
} from './upstream-error.js'
/** @internal A worker script's URL, built or from the sources (the store's PGlite thread). */
export { workerEntry } from './worker-entry.js'
