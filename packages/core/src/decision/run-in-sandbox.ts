import type { DecisionSandbox } from './decision-sandbox.js'
import { decisionModule, discardDecisionModule } from './load-runtime.js'
import { acquireSandbox, retireSandbox } from './sandbox-pool.js'
import { withUtcHostClock } from './utc-host-clock.js'

/** What `runInSandbox` returns: the body's value, or why the sandbox itself failed. */
export type SandboxRun<T> = { fuelConsumed: number; logs: string[] } & (
  | { ok: true; value: T }
  | { ok: false; error: string }
)

/**
 * Opens a fresh sandbox, runs `body` against it and retires it (disposed after the current
 * task), all with the sandbox clock in UTC. A host exception (the native stack exhausted inside WebAssembly, or QuickJS aborting)
 * is answered with an error and the whole WebAssembly module is replaced, because its memory
 * can no longer be trusted. Throws only when the runtime was never loaded.
 */
export function runInSandbox<T>(
  options: { captureLogs: boolean },
  body: (sandbox: DecisionSandbox) => T,
): SandboxRun<T> {
  const module = decisionModule()
  if (module === 'restarting') {
    return {
      ok: false,
      error: 'decision sandbox is restarting after a failure',
      fuelConsumed: 0,
      logs: [],
    }
  }
  return withUtcHostClock((): SandboxRun<T> => {
    let sandbox: DecisionSandbox | undefined
    try {
      sandbox = acquireSandbox(module)
      sandbox.begin(options)
      const value = body(sandbox)
      const run: SandboxRun<T> = {
        ok: true,
        value,
        fuelConsumed: sandbox.fuelConsumed,
        logs: sandbox.capturedLogs(),
      }
      retireSandbox(module, sandbox)
      return run
    } catch (error) {
      discardDecisionModule(module)
      return {
        ok: false,
        error: `decision sandbox failed: ${error instanceof Error ? error.message : String(error)}`,
        fuelConsumed: sandbox?.fuelConsumed ?? 0,
        logs: sandbox?.capturedLogs() ?? [],
      }
    }
  })
}
