import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Catalog } from '../catalog.types.js'
import { PalisadeError, StackDepthError } from '../errors.js'
import { rewrite } from '../rewrite.js'
import type { RewriteResult } from '../rewrite.types.js'
import { cachedRewrite, rememberRewrite } from '../rewrite-cache.js'
import type { CompiledSession } from '../session/compiled-session.js'
import type { SessionInput } from '../session-context.types.js'
import { SqlState } from '../sqlstate.js'
import { workerEntry } from '../worker-entry.js'
import type { RewriteRequest, RewriteResponse, SerializedRewriteError } from './rewrite-protocol.js'

/** How large and how costly one statement may be, and where it is rewritten. */
export interface StatementLimits {
  /** The longest statement accepted, in UTF-8 bytes; longer ones are refused (54000). */
  readonly maxStatementBytes: number
  /** Statements at least this many characters long are rewritten in a worker on a cache miss. */
  readonly offloadBytes: number
  /** Wall-clock budget of one rewrite in a worker; past it the worker is stopped (54001). */
  readonly rewriteTimeoutMs: number
  /** Rewrite workers. */
  readonly workers: number
}

export const DEFAULT_STATEMENT_LIMITS: StatementLimits = {
  maxStatementBytes: 1024 * 1024,
  offloadBytes: 4096,
  rewriteTimeoutMs: 5_000,
  // One core stays free for the main thread, which serves every connection.
  workers: Math.max(1, availableParallelism() - 1),
}

interface Job {
  readonly id: number
  readonly key: number
  readonly session: CompiledSession
  readonly sql: string
  readonly resolve: (result: RewriteResult) => void
  readonly reject: (error: PalisadeError) => void
}

interface RewriteWorker {
  readonly worker: Worker
  readonly queue: Job[]
  /** Sessions this worker was sent (it may have evicted some: it then asks again). */
  readonly known: Set<number>
  /** Catalogs this worker was sent, likewise. */
  readonly catalogs: Set<number>
  ready: boolean
  running: Job | undefined
  timer: NodeJS.Timeout | undefined
}

/**
 * Statements that may read the virtual catalog go to a worker however short: over a wide
 * catalog their rewrite builds and assembles the session's visible lists (hundreds of
 * milliseconds for the first at 10,000 tables), which would hold every other session's
 * statements on this thread.
 */
const READS_CATALOG = /pg_|information_schema/i

/** A worker's stack: deep enough for any nesting PostgreSQL itself accepts (max_stack_depth 2 MB). */
const WORKER_STACK_MB = 64

/** Sessions a worker keeps track of before the main thread forgets what it sent. */
const KNOWN_SESSIONS = 1024
/** Catalogs likewise (a worker keeps 16). */
const KNOWN_CATALOGS = 16

/**
 * Rewrites statements so that no single one can stall the thread that serves every connection:
 * a cache hit or a short statement is rewritten at once on the calling thread (microseconds);
 * a long one goes to a pool of worker threads, each holding its own copy of the session, with a
 * time budget after which its worker is stopped and replaced. Sessions whose policies run
 * decision functions are always rewritten on the calling thread, where their runtime lives.
 */
export class RewritePool {
  readonly limits: StatementLimits
  readonly #workers: RewriteWorker[] = []
  readonly #keys = new WeakMap<CompiledSession, number>()
  readonly #catalogKeys = new WeakMap<Catalog, number>()
  #nextKey = 1
  #nextId = 1
  #closed = false

  constructor(limits: Partial<StatementLimits> = {}) {
    this.limits = { ...DEFAULT_STATEMENT_LIMITS, ...limits }
  }

  /** Starts the workers ahead of the first long statement (optional: they start on demand). */
  start(): void {
    this.#replenish()
  }

  /**
   * The rewrite of `sql` for `session`: a result when it is ready at once, else a promise.
   * Throws (or rejects with) a `PalisadeError`, as `rewrite()` does.
   */
  rewrite(sql: string, session: CompiledSession): RewriteResult | Promise<RewriteResult> {
    checkStatementSize(sql, this.limits.maxStatementBytes)
    const hit = cachedRewrite(sql, session)
    if (hit) return hit
    if (!session.isolationInput || this.#closed) return rewrite(sql, session)
    if (sql.length < this.limits.offloadBytes && !READS_CATALOG.test(sql)) {
      try {
        return rewrite(sql, session)
      } catch (error) {
        // A short statement can still nest deeper than this thread's stack: a worker's is deeper.
        if (!(error instanceof StackDepthError)) throw error
      }
    }
    return new Promise<RewriteResult>((resolve, reject) => {
      this.#dispatch({
        id: this.#nextId++,
        key: this.#keyOf(session),
        session,
        sql,
        resolve,
        reject,
      })
    })
  }

  /** Stops the workers; statements still waiting are refused. */
  async close(): Promise<void> {
    this.#closed = true
    const workers = this.#workers.splice(0)
    for (const w of workers) {
      for (const job of [...(w.running ? [w.running] : []), ...w.queue]) {
        job.reject(shuttingDown())
      }
      clearTimeout(w.timer)
    }
    await Promise.all(workers.map((w) => w.worker.terminate()))
  }

  #keyOf(session: CompiledSession): number {
    let key = this.#keys.get(session)
    if (key === undefined) {
      key = this.#nextKey++
      this.#keys.set(session, key)
    }
    return key
  }

  #catalogKeyOf(catalog: Catalog): number {
    let key = this.#catalogKeys.get(catalog)
    if (key === undefined) {
      key = this.#nextKey++
      this.#catalogKeys.set(catalog, key)
    }
    return key
  }

  #dispatch(job: Job): void {
    if (this.#closed) {
      job.reject(shuttingDown())
      return
    }
    this.#replenish()
    let best = this.#workers[0] as RewriteWorker
    for (const w of this.#workers) if (load(w) < load(best)) best = w
    best.queue.push(job)
    this.#pump(best)
  }

  #pump(w: RewriteWorker): void {
    if (!w.ready || w.running) return
    const job = w.queue.shift()
    if (!job) return
    w.running = job
    const request: RewriteRequest = { id: job.id, key: job.key, sql: job.sql }
    if (!w.known.has(job.key)) {
      if (w.known.size >= KNOWN_SESSIONS) w.known.clear()
      w.known.add(job.key)
      const { catalog, ...input } = job.session.isolationInput as SessionInput
      const catalogKey = this.#catalogKeyOf(catalog)
      Object.assign(request, { input, catalogKey })
      if (!w.catalogs.has(catalogKey)) {
        if (w.catalogs.size >= KNOWN_CATALOGS) w.catalogs.clear()
        w.catalogs.add(catalogKey)
        Object.assign(request, { catalog })
      }
    }
    w.worker.postMessage(request)
    w.timer = setTimeout(
      () => this.#stop(w, tooComplex(this.limits.rewriteTimeoutMs)),
      this.limits.rewriteTimeoutMs,
    )
  }

  #onMessage(w: RewriteWorker, message: RewriteResponse): void {
    if ('ready' in message) {
      w.ready = true
      this.#pump(w)
      return
    }
    const job = w.running
    if (!job || job.id !== message.id) return
    clearTimeout(w.timer)
    w.running = undefined
    if ('missing' in message) {
      w.known.delete(job.key)
      const catalog = job.session.isolationInput?.catalog
      if (catalog) w.catalogs.delete(this.#catalogKeyOf(catalog))
      w.queue.unshift(job)
    } else if ('result' in message) {
      rememberRewrite(job.sql, job.session, message.result)
      job.resolve(message.result)
    } else {
      job.reject(deserialize(message.error))
    }
    this.#pump(w)
  }

  /** Stops a worker: its running statement gets `error`, its queue moves to the others. */
  #stop(w: RewriteWorker, error: PalisadeError): void {
    const index = this.#workers.indexOf(w)
    if (index < 0) return
    this.#workers.splice(index, 1)
    clearTimeout(w.timer)
    void w.worker.terminate()
    w.running?.reject(error)
    w.running = undefined
    const queued = w.queue.splice(0)
    // A worker that never started would fail again: its queue is refused, not passed on.
    for (const job of queued) {
      if (w.ready) this.#dispatch(job)
      else job.reject(error)
    }
  }

  #replenish(): void {
    while (!this.#closed && this.#workers.length < Math.max(1, this.limits.workers)) {
      this.#workers.push(this.#spawn())
    }
  }

  #spawn(): RewriteWorker {
    const entry = workerEntry(
      new URL('./rewrite-worker.js', import.meta.url),
      new URL('./rewrite-worker.ts', import.meta.url),
    )
    const worker = new Worker(entry.url, {
      eval: entry.eval,
      // PostgreSQL's own parser and planner refuse deeper nesting long before this stack runs out.
      resourceLimits: { stackSizeMb: WORKER_STACK_MB },
    })
    // Idle workers never keep the process alive.
    worker.unref()
    const w: RewriteWorker = {
      worker,
      queue: [],
      known: new Set(),
      catalogs: new Set(),
      ready: false,
      running: undefined,
      timer: undefined,
    }
    worker.on('message', (message: RewriteResponse) => this.#onMessage(w, message))
    const lost = (cause: string) =>
      this.#stop(
        w,
        new PalisadeError(SqlState.InternalError, 'internal error', {
          auditMessage: `rewrite worker ${cause}`,
        }),
      )
    worker.on('error', (error) => lost(`failed: ${error.message}`))
    worker.on('exit', (code) => lost(`exited with code ${code}`))
    return w
  }
}

function load(w: RewriteWorker): number {
  return w.queue.length + (w.running ? 1 : 0)
}

/** Refuses a statement longer than the limit (54000), as PostgreSQL refuses an oversized one. */
export function checkStatementSize(sql: string, maxBytes: number): void {
  // A UTF-8 byte count is only needed when the text could be long enough.
  if (sql.length * 3 <= maxBytes) return
  const bytes = Buffer.byteLength(sql, 'utf8')
  if (bytes > maxBytes) {
    throw new PalisadeError(
      SqlState.ProgramLimitExceeded,
      `statement of ${bytes} bytes exceeds the limit of ${maxBytes} bytes`,
    )
  }
}

function shuttingDown(): PalisadeError {
  return new PalisadeError(SqlState.ConnectionFailure, 'the server is shutting down')
}

function tooComplex(budgetMs: number): PalisadeError {
  return new PalisadeError(SqlState.StatementTooComplex, 'statement is too complex', {
    hint: 'Simplify the statement or split it into several.',
    auditMessage: `statement is too complex: its rewrite exceeded the ${budgetMs} ms budget`,
  })
}

function deserialize(error: SerializedRewriteError): PalisadeError {
  return new PalisadeError(error.code, error.message, {
    severity: error.severity,
    detail: error.detail,
    hint: error.hint,
    auditStatus: error.auditStatus,
    auditMessage: error.auditMessage,
  })
}
