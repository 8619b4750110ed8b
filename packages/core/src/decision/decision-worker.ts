/**
 * The decision worker thread: runs compile and evaluate requests in its own QuickJS module, so
 * that the main thread can abandon (terminate) one that runs past the hard time limit even when
 * QuickJS's interrupt handler is not reached (a single slow built-in call per step).
 */
import { type MessagePort, workerData } from 'node:worker_threads'
import { compileInThread } from './compile-in-thread.js'
import { DecisionCompileError } from './decision-compile-error.js'
import { evaluateUnchecked } from './evaluate-decision.js'
import { loadDecisionRuntime } from './load-runtime.js'
import { RESPONSE_FLAG, type WorkerRequest, type WorkerResponse } from './worker-protocol.js'
import { markDecisionWorkerThread } from './worker-thread-flag.js'

const { port, signal } = workerData as { port: MessagePort; signal: SharedArrayBuffer }
const flag = new Int32Array(signal)

function handle(request: WorkerRequest): WorkerResponse {
  if (request.op === 'evaluate') {
    return {
      ok: true,
      evaluation: evaluateUnchecked(
        request.artifact,
        request.ctx,
        request.config,
        request.logLevel,
      ),
    }
  }
  try {
    return { ok: true, artifact: compileInThread(request.source).artifact }
  } catch (error) {
    if (error instanceof DecisionCompileError) {
      const position: { line?: number; column?: number } = {}
      if (error.line !== undefined) position.line = error.line
      if (error.column !== undefined) position.column = error.column
      return { ok: false, compileError: { message: error.message, ...position } }
    }
    return { ok: false, error: error instanceof Error ? error.message : String(error) }
  }
}

markDecisionWorkerThread()
await loadDecisionRuntime()
port.on('message', (request: WorkerRequest) => {
  port.postMessage(handle(request))
  Atomics.store(flag, RESPONSE_FLAG, 1)
  Atomics.notify(flag, RESPONSE_FLAG)
})
port.postMessage('ready')
