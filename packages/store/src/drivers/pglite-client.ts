import { Worker } from 'node:worker_threads'
import { workerEntry } from '@palisade/core'
import type { AuditSink } from '../audit/query-audit-writer.js'
import {
  fromWireError,
  type PgliteRequest,
  type PgliteResponse,
  type PgliteThreadOptions,
  type WireQueryOptions,
} from './pglite-messages.js'

/** The part of PGlite's query options drizzle passes: a row mode and identity parsers. */
interface QueryOptions {
  rowMode?: 'array' | 'object'
  parsers?: Record<number, unknown>
}

/** What a query answers, as PGlite gives it. */
interface Results {
  rows: unknown[]
  fields: { name: string; dataTypeID: number }[]
  affectedRows?: number
}

/** A transaction handle, as drizzle's PGlite session uses one. */
interface RemoteTransaction {
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results>
  exec(sql: string): Promise<Results[]>
  rollback(): Promise<void>
  readonly closed: boolean
}

type Call = {
  [K in PgliteRequest['op']]: Omit<Extract<PgliteRequest, { op: K }>, 'id'>
}[PgliteRequest['op']]

/** The error of every request once the thread is gone: the store cannot be reached. */
function stopped(cause: string): Error {
  return Object.assign(new Error(`the embedded store stopped: ${cause}`), { code: '08006' })
}

/**
 * PGlite on a thread of its own (pglite-thread.ts), with the part of PGlite's API drizzle's
 * PGlite driver calls: `query`, `transaction`, `exec`. Drizzle's parsers are identity functions
 * for a few types (timestamps stay text); they travel as those type numbers.
 */
export class PgliteClient {
  readonly #worker: Worker
  readonly #pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void }
  >()
  #nextId = 1
  #closed = false
  #gone: Error | undefined
  readonly waitReady: Promise<void>

  constructor(options: PgliteThreadOptions) {
    const entry = workerEntry(
      new URL('./pglite-thread.js', import.meta.url),
      new URL('./pglite-thread.ts', import.meta.url),
    )
    this.#worker = new Worker(entry.url, { eval: entry.eval, workerData: options })
    this.waitReady = new Promise<void>((resolve, reject) => {
      this.#worker.on('message', (message: PgliteResponse) => {
        if ('ready' in message) {
          if (message.ready) resolve()
          else {
            reject(fromWireError(message.error))
            void this.#worker.terminate()
          }
          return
        }
        const waiting = this.#pending.get(message.id)
        if (!waiting) return
        this.#pending.delete(message.id)
        if (message.ok) waiting.resolve(message.value)
        else waiting.reject(fromWireError(message.error))
      })
      const lost = (cause: string) => {
        this.#gone ??= stopped(cause)
        reject(this.#gone)
        for (const waiting of this.#pending.values()) waiting.reject(this.#gone)
        this.#pending.clear()
      }
      this.#worker.on('error', (error) => lost(error.message))
      this.#worker.on('exit', (code) => lost(`exit code ${code}`))
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  query(sql: string, params: unknown[] = [], options: QueryOptions = {}): Promise<Results> {
    return this.#call({
      op: 'query',
      sql,
      params,
      options: wireOptions(options),
    }) as Promise<Results>
  }

  exec(sql: string): Promise<Results[]> {
    return this.#call({ op: 'exec', sql }) as Promise<Results[]>
  }

  /** Runs `fn` in a transaction; other requests wait until it ends, as with PGlite itself. */
  async transaction<T>(fn: (tx: RemoteTransaction) => Promise<T>): Promise<T> {
    const tx = (await this.#call({ op: 'begin' })) as number
    let open = true
    const handle: RemoteTransaction = {
      query: (sql, params = [], options = {}) =>
        this.#call({
          op: 'query',
          sql,
          params,
          options: wireOptions(options),
          tx,
        }) as Promise<Results>,
      exec: (sql) => this.#call({ op: 'exec', sql, tx }) as Promise<Results[]>,
      rollback: async () => {
        open = false
        await this.#call({ op: 'end', tx, commit: false })
      },
      get closed() {
        return !open
      },
    }
    let result: T
    try {
      result = await fn(handle)
    } catch (error) {
      if (open) {
        open = false
        await this.#call({ op: 'end', tx, commit: false }).catch(() => {})
      }
      throw error
    }
    if (open) {
      open = false
      await this.#call({ op: 'end', tx, commit: true })
    }
    return result
  }

  /** A sink that stores query-audit batches on this thread (audit-ingest.ts), linked with `key`. */
  async auditSink(key: Buffer | undefined, chainId: string): Promise<AuditSink> {
    await this.#call({ op: 'audit-open', key: key ? new Uint8Array(key) : null, chainId })
    return {
      write: async (batch) => {
        await this.#call({ op: 'audit', batch })
      },
    }
  }

  /** A snapshot of the data directory, as PGlite's `dumpDataDir('none')` gives it. */
  async dumpDataDir(): Promise<Blob> {
    const { bytes, type } = (await this.#call({ op: 'dump' })) as {
      bytes: Uint8Array
      type: string
    }
    return new Blob([bytes], { type })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#call({ op: 'close' }).catch(() => {})
    await this.#worker.terminate()
  }

  #call(request: Call): Promise<unknown> {
    if (this.#gone) return Promise.reject(this.#gone)
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      this.#worker.postMessage({ ...request, id })
    })
  }
}

function wireOptions(options: QueryOptions): WireQueryOptions {
  return {
    ...(options.rowMode ? { rowMode: options.rowMode } : {}),
    ...(options.parsers ? { textTypes: Object.keys(options.parsers).map(Number) } : {}),
  }
}
