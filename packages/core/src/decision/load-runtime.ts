import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync'
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core'
import { startDecisionWorker } from './decision-worker-client.js'
import { isDecisionWorkerThread } from './worker-thread-flag.js'

let current: QuickJSWASMModule | undefined
let loading: Promise<QuickJSWASMModule> | undefined
let everLoaded = false

/**
 * Loads QuickJS (the release-sync WebAssembly build) once; later calls return at once.
 * Await it before `compileDecisionFunction` or `evaluateDecision`, which are synchronous.
 */
export async function loadDecisionRuntime(): Promise<void> {
  // The main thread runs functions in the decision worker; it loads QuickJS there.
  if (!isDecisionWorkerThread()) await startDecisionWorker()
  if (current) return
  loading ??= newQuickJSWASMModuleFromVariant(RELEASE_SYNC).then(
    async (module) => {
      await warmUp(module)
      current = module
      everLoaded = true
      return module
    },
    (error: unknown) => {
      loading = undefined
      throw error
    },
  )
  await loading
}

// Ours and finite, so it runs without limits.
const WARM_UP = `function decide(x) { return { fire: x % 2 === 0 } }
let fired = 0
for (let i = 0; i < 2000; i++) fired += decide(i).fire ? 1 : 0
JSON.stringify(JSON.parse('{"session":{"roles":["a"]}}')) + fired`

/**
 * Runs the interpreter briefly, then yields so V8 can finish compiling QuickJS's hot
 * WebAssembly functions with its optimizing tier in the background. Cold, the first
 * fuel-limited loop runs about five times slower and can meet the time limit first.
 */
async function warmUp(module: QuickJSWASMModule): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const context = module.newContext()
    const result = context.evalCode(WARM_UP)
    ;(result.error ?? result.value).dispose()
    context.dispose()
  }
  await new Promise((resolve) => setTimeout(resolve, 10))
}

/**
 * @internal The loaded module, or `'restarting'` while a discarded one is being replaced.
 * Throws when `loadDecisionRuntime()` was never awaited: that is a caller bug, not a
 * decision-function failure.
 */
export function decisionModule(): QuickJSWASMModule | 'restarting' {
  if (current) return current
  if (everLoaded) return 'restarting'
  throw new Error(
    'decision runtime is not loaded: await loadDecisionRuntime() (or loadCore()) first',
  )
}

/**
 * @internal Drops a module whose memory can no longer be trusted (a host exception escaped
 * from WebAssembly) and loads a fresh one in the background. The old runtime is never
 * disposed: QuickJS would abort on its leaked objects.
 */
export function discardDecisionModule(broken: QuickJSWASMModule): void {
  if (current !== broken) return
  current = undefined
  loading = undefined
  // A failed reload surfaces on the next explicit loadDecisionRuntime() call.
  loadDecisionRuntime().catch(() => undefined)
}
