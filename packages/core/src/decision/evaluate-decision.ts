import type { DecisionContext, DecisionEvaluation, DecisionLogLevel } from './decision.types.js'
import { openArtifact } from './decision-artifact.js'
import { callDecisionWorker, HARD_LIMIT_MS } from './decision-worker-client.js'
import { runInSandbox } from './run-in-sandbox.js'
import { isSandboxError } from './sandbox-error.js'
import { isDecisionWorkerThread } from './worker-thread-flag.js'

/**
 * Evaluates a compiled decision function in a fresh sandbox: `evaluate(ctx, config)` must
 * return a plain object whose own `fire` is a boolean (docs/errors.md). Synchronous and
 * never throws for anything the function does: exceptions, exceeded limits, invalid results
 * and corrupt artifacts all come back as `error` with `fire: null`. Console lines are kept
 * for `info`, only on failure for `error`, and never for `off`. Requires `loadDecisionRuntime()`.
 */
export function evaluateDecision(
  artifact: string | null,
  ctx: DecisionContext,
  config: unknown,
  options: { logLevel?: DecisionLogLevel } = {},
): DecisionEvaluation {
  return evaluateIsolated(artifact, ctx, config, options.logLevel ?? 'off')
}

/**
 * @internal Evaluates in the decision worker, which the main thread terminates when it runs past
 * the hard limit; inside the worker itself, evaluates in place.
 */
export function evaluateIsolated(
  artifact: string | null,
  ctx: unknown,
  config: unknown,
  logLevel: DecisionLogLevel,
): DecisionEvaluation {
  if (isDecisionWorkerThread()) return evaluateUnchecked(artifact, ctx, config, logLevel)
  const started = performance.now()
  const failed = (error: string): DecisionEvaluation => ({
    fire: null,
    error,
    fuelConsumed: 0,
    timeUs: Math.round((performance.now() - started) * 1000),
    logs: [],
  })
  const response = callDecisionWorker(
    { op: 'evaluate', artifact, ctx, config, logLevel },
    HARD_LIMIT_MS.evaluate,
  )
  if (response === undefined) return failed('decision sandbox is starting or restarting')
  if (response === 'timeout') {
    return failed(`decision function exceeded the ${HARD_LIMIT_MS.evaluate} ms time limit`)
  }
  if (!response.ok || !response.evaluation) {
    return failed(response.ok ? 'decision worker sent no evaluation' : (response.error ?? 'failed'))
  }
  return response.evaluation
}

/** @internal `evaluateDecision` for a context of any shape (the test route passes it as given). */
export function evaluateUnchecked(
  artifact: string | null,
  ctx: unknown,
  config: unknown,
  logLevel: DecisionLogLevel,
): DecisionEvaluation {
  const started = performance.now()
  const finish = (fire: boolean | null, error: string | null, fuel = 0, logs: string[] = []) => ({
    fire,
    error,
    fuelConsumed: fuel,
    timeUs: Math.round((performance.now() - started) * 1000),
    logs: logLevel === 'info' || (logLevel === 'error' && error !== null) ? logs : [],
  })
  if (artifact === null) return finish(null, 'decision module is missing')
  const body = openArtifact(artifact)
  if (body === undefined) return finish(null, 'decision module is corrupt')
  const json = toJson(ctx, config)
  if ('error' in json) return finish(null, json.error)

  const run = runInSandbox({ captureLogs: logLevel !== 'off' }, (sandbox) =>
    sandbox.evaluate(body, json.ctx, json.config),
  )
  if (!run.ok) return finish(null, run.error, run.fuelConsumed, run.logs)
  if (isSandboxError(run.value)) return finish(null, run.value.message, run.fuelConsumed, run.logs)
  return finish(run.value, null, run.fuelConsumed, run.logs)
}

/** Serializes ctx and config for the sandbox; a missing or null config means `{}` (docs/decision-functions.md). */
function toJson(
  ctx: unknown,
  config: unknown,
): { ctx: string; config: string } | { error: string } {
  try {
    const ctxJson = JSON.stringify(ctx)
    const configJson = config === undefined || config === null ? '{}' : JSON.stringify(config)
    if (typeof ctxJson !== 'string') return { error: 'decision context is not JSON' }
    if (typeof configJson !== 'string') return { error: 'decision config is not JSON' }
    return { ctx: ctxJson, config: configJson }
  } catch (error) {
    return { error: `decision context or config is not JSON: ${(error as Error).message}` }
  }
}
