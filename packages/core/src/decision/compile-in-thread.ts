import { sealArtifact, wrapDecisionSource } from './decision-artifact.js'
import { DecisionCompileError } from './decision-compile-error.js'
import { DECISION_PARSE_STACK_LIMIT_BYTES } from './decision-limits.js'
import { decisionModule } from './load-runtime.js'
import { runInSandbox } from './run-in-sandbox.js'
import type { SandboxError } from './sandbox-error.js'

/**
 * @internal Compiles a decision function in this thread (the worker calls it). Compiles at save time (docs/decision-functions.md, docs/decision-functions.md): checks the source
 * parses as a strict script, wraps it in a strict-mode function, runs the top level once in
 * the sandbox (with the full limits) and checks that `evaluate` is a function. QuickJS cannot
 * export bytecode, so the artifact is the checked, wrapped source plus a checksum line.
 * Synchronous; `loadDecisionRuntime()` must have been awaited.
 *
 * ```ts
 * await loadDecisionRuntime()
 * const { artifact } = compileDecisionFunction('function evaluate(ctx) { return { fire: true } }')
 * ```
 */
export function compileInThread(source: string): { artifact: string } {
  if (typeof source !== 'string' || source.trim() === '') {
    throw new DecisionCompileError('decision function source is empty')
  }
  if (decisionModule() === 'restarting') {
    // Not the source's fault: the runtime is being replaced after a failure.
    throw new Error('decision runtime is restarting after a failure; try again')
  }
  const body = wrapDecisionSource(source)
  const run = runInSandbox({ captureLogs: false }, (sandbox): SandboxError | undefined => {
    const parseOptions = { strict: true, stackLimit: DECISION_PARSE_STACK_LIMIT_BYTES }
    const syntax = sandbox.parse(source, parseOptions)
    if (syntax) return syntaxError(syntax)
    const wrapped = sandbox.parse(body, parseOptions)
    if (wrapped) return { message: `source cannot be wrapped in a function: ${wrapped.message}` }
    return sandbox.check(body)
  })
  if (!run.ok)
    throw new DecisionCompileError(`decision function could not be compiled: ${run.error}`)
  if (run.value) throw new DecisionCompileError(run.value.message, run.value)
  return { artifact: sealArtifact(body) }
}

function syntaxError(error: SandboxError): SandboxError {
  if (error.message.endsWith('stack overflow') || error.message.startsWith('stack limit')) {
    return { message: 'decision function is nested too deeply to compile' }
  }
  const at = error.line === undefined ? '' : ` at line ${error.line}, column ${error.column ?? 1}`
  return { ...error, message: `syntax error${at}: ${error.message.replace(/^SyntaxError: /, '')}` }
}
