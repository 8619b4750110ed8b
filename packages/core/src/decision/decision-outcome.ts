import type { DecisionBinding, DecisionRecord } from '../policy/policy.types.js'
import { runtimeStats } from '../runtime-stats.js'
import type { DecisionContext, DecisionLogEntry, DecisionOutcome } from './decision.types.js'
import { evaluateDecision } from './evaluate-decision.js'

/**
 * Decides whether a policy fires, by the outcome rules of docs/decision-functions.md#outcomes: a disabled function or a
 * missing module fires without evaluating; `{fire: true}` fires and `{fire: false}` skips; any
 * failure fires under `on_error: deny` and skips under `skip`. Every failure is reported to
 * `onLog` at `error` level, with the function's name and id. Console lines go to `onLog` as
 * `info` when `log_level` is `info`, and as `error` beside a failure when it is `error`.
 */
export function resolveDecision(
  binding: DecisionBinding,
  ctx: DecisionContext,
  onLog?: (entry: DecisionLogEntry) => void,
): DecisionOutcome {
  if (!runsDecisionFunction(binding)) return { fire: true }
  // A session-context function never sees query facts (docs/decision-functions.md#the-context-ctx).
  const scoped = binding.evaluateContext === 'session' && ctx.query ? { session: ctx.session } : ctx
  const evaluation = evaluateDecision(binding.artifact, scoped, binding.config, {
    logLevel: binding.logLevel,
  })
  countEvaluation(evaluation.fire === null ? (evaluation.error ?? 'no decision') : evaluation.error)
  const report = (level: DecisionLogEntry['level'], message: string) =>
    onLog?.({ level, functionId: binding.functionId, functionName: binding.name, message })

  if (evaluation.error === null && evaluation.fire !== null) {
    for (const line of evaluation.logs) report('info', line)
    return { fire: evaluation.fire, evaluation }
  }
  const error = evaluation.error ?? 'evaluation produced no decision'
  const fire = binding.onError === 'deny'
  const effect = fire ? 'policy fires (on_error deny)' : 'policy skipped (on_error skip)'
  report('error', `decision function failed, ${effect}: ${error}`)
  for (const line of evaluation.logs) report(binding.logLevel === 'info' ? 'info' : 'error', line)
  return { fire, error, evaluation }
}

function countEvaluation(error: string | null): void {
  runtimeStats.decisionEvaluations++
  if (error === null) return
  runtimeStats.decisionErrors++
  if (/fuel limit/.test(error)) runtimeStats.decisionFuelExhausted++
  else if (/time limit/.test(error)) runtimeStats.decisionTimeouts++
}

/**
 * @internal Whether a binding's function is ever evaluated: a disabled function or a missing
 * module fires without it. Sessions without one never start the decision workers.
 */
export function runsDecisionFunction(binding: DecisionBinding | null | undefined): boolean {
  return !!binding?.isEnabled && binding.artifact !== null
}

/** The audit's record of an outcome; undefined when no evaluation ran (the policy fired). */
export function decisionRecord(outcome: DecisionOutcome): DecisionRecord | undefined {
  const evaluation = outcome.evaluation
  if (!evaluation) return undefined
  return {
    result: {
      fire: outcome.fire,
      fuel_consumed: evaluation.fuelConsumed,
      time_us: evaluation.timeUs,
    },
    logs: evaluation.logs,
    error: outcome.error ?? null,
  }
}
