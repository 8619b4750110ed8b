/**
 * Decision functions: untrusted JavaScript, run in a QuickJS sandbox, that decides whether a
 * policy fires. See docs/decision-functions.md.
 */
export { compileDecisionFunction } from './compile-decision-function.js'
export type * from './decision.types.js'
export { DecisionCompileError } from './decision-compile-error.js'
export { buildDecisionContext } from './decision-context.js'
export { DECISION_FUEL_LIMIT } from './decision-limits.js'
export { decisionRecord, resolveDecision } from './decision-outcome.js'
export { evaluateDecision } from './evaluate-decision.js'
export { loadDecisionRuntime } from './load-runtime.js'
export { testDecisionFunction } from './test-decision-function.js'
