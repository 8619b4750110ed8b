import type { QuickJSWASMModule } from 'quickjs-emscripten-core'
import { DecisionSandbox } from './decision-sandbox.js'
import { decisionModule, discardDecisionModule } from './load-runtime.js'

/** Sandboxes kept prepared; two cover a policy pair per query without growing memory much. */
const POOL_SIZE = 2

const ready: DecisionSandbox[] = []
/** Used sandboxes waiting to be disposed after the current task. */
const retiring: DecisionSandbox[] = []
/** More used sandboxes than this are disposed at once (a synchronous loop never yields). */
const MAX_RETIRING = 4
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
    retiring.length = 0
    owner = module
  }
  const sandbox = ready.pop() ?? new DecisionSandbox(module)
  scheduleRefill(module)
  return sandbox
}

/**
 * Hands back a used sandbox: it is disposed after the current task, off the evaluation's path
 * (its result is already read; nothing runs in it again). Throws, like `close()`, only when
 * disposing at once because too many are waiting.
 */
export function retireSandbox(module: QuickJSWASMModule, sandbox: DecisionSandbox): void {
  if (owner !== module) return
  if (retiring.length >= MAX_RETIRING) {
    sandbox.close()
    return
  }
  retiring.push(sandbox)
  scheduleRefill(module)
}

function scheduleRefill(module: QuickJSWASMModule): void {
  if (refillScheduled) return
  refillScheduled = true
  setImmediate(() => {
    refillScheduled = false
    if (owner !== module || decisionModule() !== module) return
    try {
      // A dispose that throws means QuickJS aborted: the module is replaced.
      for (let used = retiring.pop(); used; used = retiring.pop()) used.close()
      while (ready.length < POOL_SIZE) ready.push(new DecisionSandbox(module))
    } catch {
      retiring.length = 0
      discardDecisionModule(module)
    }
  }).unref()
}
