import { loadParser } from './ast/parse.js'
import { loadDecisionRuntime } from './decision/index.js'

/**
 * Loads the SQL parser and the decision-function runtime (both WebAssembly) once.
 * `compileSession` loads what its session needs; call this yourself before the synchronous
 * validators, `compileDecisionFunction` or `evaluateDecision`.
 */
export async function loadCore(): Promise<void> {
  await Promise.all([loadParser(), loadDecisionRuntime()])
}

/**
 * @internal The parser, plus the decision runtime only when asked: its two worker threads each
 * hold a QuickJS module, tens of megabytes a proxy without decision functions does not need.
 */
export async function loadCoreFor(needs: { decisions: boolean }): Promise<void> {
  await Promise.all([loadParser(), needs.decisions ? loadDecisionRuntime() : undefined])
}
