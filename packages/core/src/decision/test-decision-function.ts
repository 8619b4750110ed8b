import { compileDecisionFunction } from './compile-decision-function.js'
import type { DecisionTestInput, DecisionTestResult } from './decision.types.js'
import { DecisionCompileError } from './decision-compile-error.js'
import { evaluateIsolated } from './evaluate-decision.js'
import { loadDecisionRuntime } from './load-runtime.js'

/**
 * Backs `POST /api/v1/decision-functions/test` (docs/decision-functions.md): compiles the source and
 * evaluates it once in the production sandbox with `testContext` as `ctx`, capturing console
 * output whatever the log level. A compile error has no `result`; nothing is stored.
 */
export async function testDecisionFunction(input: DecisionTestInput): Promise<DecisionTestResult> {
  await loadDecisionRuntime()
  let artifact: string
  try {
    artifact = compileDecisionFunction(input.decisionFn).artifact
  } catch (error) {
    if (error instanceof DecisionCompileError) return { success: false, error: error.message }
    throw error
  }
  const ctx = contextFor(input.testContext, input.evaluateContext)
  const evaluation = evaluateIsolated(artifact, ctx, input.decisionConfig, 'info')
  const result = {
    fuel_consumed: evaluation.fuelConsumed,
    time_us: evaluation.timeUs,
    logs: evaluation.logs,
  }
  if (evaluation.error !== null || evaluation.fire === null) {
    return { success: false, error: evaluation.error ?? 'no decision', result }
  }
  return { success: true, result: { fire: evaluation.fire, ...result } }
}

/** The test context as given, without `query` for a session-context run. */
function contextFor(
  testContext: unknown,
  evaluateContext: 'session' | 'query' | undefined,
): unknown {
  const given = testContext ?? {}
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return given
  const hasQuery = Object.hasOwn(given, 'query')
  const mode = evaluateContext ?? (hasQuery ? 'query' : 'session')
  if (mode === 'query' || !hasQuery) return given
  const { query: _dropped, ...rest } = given as Record<string, unknown>
  return rest
}
