import { loadParser } from './ast/parse.js'
import { loadDecisionRuntime } from './decision/index.js'

/**
 * Loads the SQL parser and the decision-function runtime (both WebAssembly) once.
 * `compileSession` calls it; call it yourself before the synchronous validators.
 */
export async function loadCore(): Promise<void> {
  await Promise.all([loadParser(), loadDecisionRuntime()])
}
