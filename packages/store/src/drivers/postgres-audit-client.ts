import { randomUUID } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { workerEntry } from '@palisade/core'
import type { AuditBatch } from '../audit/audit-batch.js'
import type { AuditSink } from '../audit/query-audit-writer.js'
import { fromWireError, type WireError } from './pglite-messages.js'
import type { AuditThreadOptions } from './postgres-audit-thread.js'

type Answer = { id: number; ok: true } | { id: number; ok: false; error: WireError }
type Call = { op: 'audit'; batch: AuditBatch } | { op: 'close' }
type Pending = Map<number, { resolve: () => void; reject: (e: Error) => void }>

/**
 * The PostgreSQL store's query-audit thread (postgres-audit-thread.ts), as a sink. Should the
 * thread ever end, the next batch starts a new one, as a new writing stream (a chain of its own).
 */
export class PostgresAuditClient implements AuditSink {
  readonly #options: Omit<AuditThreadOptions, 'chainId'>
  #thread: { worker: Worker; pending: Pending } | undefined
  #nextId = 1
  #closed = false

  constructor(options: AuditThreadOptions) {
    this.#options = options
    this.#thread = this.#start(options.chainId)
  }

  #start(chainId: string): { worker: Worker; pending: Pending } {
    const entry = workerEntry(
      new URL('./postgres-audit-thread.js', import.meta.url),
      new URL('./postgres-audit-thread.ts', import.meta.url),
    )
    const workerData: AuditThreadOptions = { ...this.#options, chainId }
    const worker = new Worker(entry.url, { eval: entry.eval, workerData })
    // The thread never keeps the process alive on its own: the writer's flush decides.
    worker.unref()
    const pending: Pending = new Map()
    const thread = { worker, pending }
    worker.on('message', (answer: Answer) => {
      const waiting = pending.get(answer.id)
      if (!waiting) return
      pending.delete(answer.id)
      if (answer.ok) waiting.resolve()
      else waiting.reject(fromWireError(answer.error))
    })
    const lost = (cause: string) => {
      if (this.#thread === thread) this.#thread = undefined
      // Reported as a lost connection, so the writer keeps its batches and tries again.
      const error = Object.assign(new Error(`the query audit thread stopped: ${cause}`), {
        code: '08006',
      })
      for (const waiting of pending.values()) waiting.reject(error)
      pending.clear()
    }
    worker.on('error', (error) => lost(error.message))
    worker.on('exit', (code) => lost(`exit code ${code}`))
    return thread
  }

  write(batch: AuditBatch): Promise<void> {
    return this.#call({ op: 'audit', batch })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const thread = this.#thread
    if (!thread) return
    await this.#call({ op: 'close' }).catch(() => {})
    await thread.worker.terminate()
  }

  #call(request: Call): Promise<void> {
    if (this.#closed && request.op !== 'close') {
      return Promise.reject(new Error('the query audit thread is closed'))
    }
    this.#thread ??= this.#start(randomUUID())
    const { worker, pending } = this.#thread
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject })
      worker.postMessage({ ...request, id })
    })
  }
}
