import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import { RESPONSE_FLAG, type WorkerRequest, type WorkerResponse } from './worker-protocol.js'

/**
 * Wall-clock limits after which the main thread stops waiting and terminates the worker. The
 * sandbox's own limits (fuel, 100 ms checked at interrupts, memory, stack) stop almost every
 * function first; these catch code that does heavy work between interrupt checks.
 */
export const HARD_LIMIT_MS = { evaluate: 1_000, compile: 5_000 } as const

interface RunningWorker {
  readonly worker: Worker
  readonly port: MessagePort
  readonly flag: Int32Array
  ready: Promise<void>
  isReady: boolean
}

/**
 * Two loaded workers, used in turn: while one answers, the other prepares its next sandbox, so
 * back-to-back evaluations do not wait for sandbox set-up. When one is terminated the other
 * takes every request at once (a hostile function costs no wait for QuickJS to load again)
 * while a replacement loads in the background.
 */
const WORKERS = 2
const pool: { workers: RunningWorker[]; turn: number; started: boolean } = {
  workers: [],
  turn: 0,
  started: false,
}

function spawn(): RunningWorker {
  const { port1, port2 } = new MessageChannel()
  const signal = new SharedArrayBuffer(4)
  const entry = workerEntry(
    new URL('./decision-worker.js', import.meta.url),
    new URL('./decision-worker.ts', import.meta.url),
  )
  const worker = new Worker(entry.url, {
    workerData: { port: port2, signal },
    transferList: [port2],
    eval: entry.eval,
  })
  // The worker must never keep the process alive on its own.
  worker.unref()
  port1.unref()
  const running: RunningWorker = {
    worker,
    port: port1,
    flag: new Int32Array(signal),
    isReady: false,
    ready: Promise.resolve(),
  }
  running.ready = new Promise<void>((resolve, reject) => {
    port1.once('message', () => {
      running.isReady = true
      resolve()
    })
    worker.once('error', reject)
  })
  worker.on('exit', () => {
    pool.workers = pool.workers.filter((w) => w !== running)
  })
  return running
}

/** Starts the decision workers (once) and resolves when all have loaded QuickJS. */
export async function startDecisionWorker(): Promise<void> {
  pool.started = true
  replenish()
  await Promise.all(pool.workers.map((w) => w.ready))
}

/** Spawns workers until the pool is full again. */
function replenish(): void {
  while (pool.workers.length < WORKERS) pool.workers.push(spawn())
}

/** The next loaded worker in turn, or undefined while none is loaded. */
function readyWorker(): RunningWorker | undefined {
  replenish()
  for (let i = 0; i < pool.workers.length; i++) {
    const worker = pool.workers[(pool.turn + i) % pool.workers.length]
    if (worker?.isReady) {
      pool.turn = (pool.turn + i + 1) % pool.workers.length
      return worker
    }
  }
  return undefined
}

/**
 * Sends one request and blocks until the answer or the hard limit. On timeout the worker is
 * terminated, the other one takes over and a replacement loads in the background. Returns
 * undefined when no worker is ready (both were lost moments ago): callers treat that as an
 * evaluation error. Throws when the workers were never started (a caller bug).
 */
export function callDecisionWorker(
  request: WorkerRequest,
  limitMs: number,
): WorkerResponse | 'timeout' | undefined {
  if (!pool.started) {
    throw new Error(
      'decision runtime is not loaded: await loadDecisionRuntime() (or loadCore()) first',
    )
  }
  const running = readyWorker()
  if (!running) return undefined
  Atomics.store(running.flag, RESPONSE_FLAG, 0)
  running.port.postMessage(request)
  const waited = Atomics.wait(running.flag, RESPONSE_FLAG, 0, limitMs)
  const message = receiveMessageOnPort(running.port)
  if (message !== undefined) return message.message as WorkerResponse
  if (waited === 'timed-out') {
    pool.workers = pool.workers.filter((w) => w !== running)
    void running.worker.terminate()
    replenish()
    return 'timeout'
  }
  return { ok: false, error: 'decision worker sent no answer' }
}
