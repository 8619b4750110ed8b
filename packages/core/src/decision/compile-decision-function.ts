import { compileInThread } from './compile-in-thread.js'
import { DecisionCompileError } from './decision-compile-error.js'
import { callDecisionWorker, HARD_LIMIT_MS } from './decision-worker-client.js'
import { isDecisionWorkerThread } from './worker-thread-flag.js'

/**
 * Compiles a decision function at save time (docs/decision-functions.md, docs/decision-functions.md): checks the source
 * parses as a strict script, wraps it in a strict-mode function, runs the top level once in
 * the sandbox (with the full limits) and checks that `evaluate` is a function. QuickJS cannot
 * export bytecode, so the artifact is the checked, wrapped source plus a checksum line.
 * Runs in the decision worker, which is terminated if it passes the hard time limit.
 * Synchronous; `loadDecisionRuntime()` must have been awaited.
 *
 * ```ts
 * await loadDecisionRuntime()
 * const { artifact } = compileDecisionFunction('function evaluate(ctx) { return { fire: true } }')
 * ```
 */
export function compileDecisionFunction(source: string): { artifact: string } {
  if (isDecisionWorkerThread()) return compileInThread(source)
  if (typeof source !== 'string' || source.trim() === '') {
    throw new DecisionCompileError('decision function source is empty')
  }
  const response = callDecisionWorker({ op: 'compile', source }, HARD_LIMIT_MS.compile)
  if (response === undefined) {
    // Not the source's fault: the worker is starting or being replaced.
    throw new Error('decision runtime is restarting after a failure; try again')
  }
  if (response === 'timeout') {
    throw new DecisionCompileError(
      `decision function could not be compiled: it ran past the ${HARD_LIMIT_MS.compile} ms limit`,
    )
  }
  if (response.ok && response.artifact !== undefined) return { artifact: response.artifact }
  if (!response.ok && response.compileError) {
    const { message, ...position } = response.compileError
    throw new DecisionCompileError(message, position)
  }
  throw new Error(`decision worker failed: ${response.ok ? 'no artifact' : response.error}`)
}
