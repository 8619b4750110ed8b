import type { QuickJSWASMModule } from 'quickjs-emscripten'
import { DecisionSandbox } from './decision-sandbox.js'
import { decisionModule, discardDecisionModule } from './load-runtime.js'

/** Sandboxes kept prepared; two cover a policy pair per query without growing memory much. */
const POOL_SIZE = 2

const ready: DecisionSandbox[] = []
let owner: QuickJSWASMModule | undefined
let refillScheduled = false

/**
 * A fresh, never-used sandbox for `module`: one prepared earlier when available, else a new
 * one. Creating a context is most of a small evaluation's cost, so the pool is refilled after
 * the current task, off the evaluation's path. Each sandbox is still used exactly once.
 */
export function acquireSandbox(module: QuickJSWASMModule): DecisionSandbox {
  if (owner !== module) {
    // Sandboxes of a discarded module are dropped, never disposed (QuickJS could abort).
    ready.length = 0
    owner = module
  }
  const sandbox = ready.pop() ?? new DecisionSandbox(module)
  scheduleRefill(module)
  return sandbox
}

function scheduleRefill(module: QuickJSWASMModule): void {
  if (refillScheduled) return
  refillScheduled = true
  setImmediate(() => {
    refillScheduled = false
    if (owner !== module || decisionModule() !== module) return
    try {
      while (ready.length < POOL_SIZE) ready.push(new DecisionSandbox(module))
    } catch {
      discardDecisionModule(module)
    }
  }).unref()
}
