import { randomUUID } from 'node:crypto'
import { ApiError } from '../http/api-error.js'

/** The states of a discovery job (docs/admin-api.md#catalog-discovery). */
export type DiscoveryJobStatus = 'running' | 'completed' | 'failed' | 'cancelled'

/** A discovery job as `GET /datasources/{id}/discover/{job_id}` returns it. */
export interface DiscoveryJob {
  job_id: string
  datasource_id: string
  action: string
  status: DiscoveryJobStatus
  /** Set only when completed. */
  result: unknown
  /** Set only when failed. */
  error: string | null
  started_at: string
  finished_at: string | null
  /** `save_catalog`, `sync_catalog`: tables written or compared so far (null until known). */
  tables_done: number | null
  /** `save_catalog`, `sync_catalog`: the tables the job goes through (null until known). */
  tables_total: number | null
}

/** What a job's work receives. */
export interface DiscoveryJobControl {
  /** Aborted when the job is cancelled; the work closes its upstream connection on it. */
  readonly signal: AbortSignal
  /**
   * Call right before writing to the store: returns false when the job was cancelled. From then
   * on the job can no longer be cancelled, so a stored result is never reported as cancelled.
   */
  beginCommit(): boolean
  /** Reports progress: `done` of `total` tables, shown in the job's status. */
  progress(done: number, total: number): void
}

interface Entry {
  job: DiscoveryJob
  controller: AbortController
  committing: boolean
}

/** Finished jobs are kept for one hour (docs/admin-api.md#catalog-discovery). */
const RETENTION_MS = 60 * 60 * 1000

/**
 * The in-memory discovery jobs of this instance: at most one running job per datasource,
 * polled by clients, forgotten an hour after they finish and lost on restart.
 */
export class DiscoveryJobs {
  readonly #jobs = new Map<string, Entry>()
  readonly #retentionMs: number

  constructor(options: { retentionMs?: number } = {}) {
    this.#retentionMs = options.retentionMs ?? RETENTION_MS
  }

  /**
   * Starts `work` as a background job. 409 invalid_state, with the running job's id in
   * `details`, when the datasource already has a running job.
   */
  start(
    datasourceId: string,
    action: string,
    work: (control: DiscoveryJobControl) => Promise<unknown>,
  ): DiscoveryJob {
    this.#prune()
    const running = [...this.#jobs.values()].find(
      (e) => e.job.datasource_id === datasourceId && e.job.status === 'running',
    )
    if (running) {
      throw new ApiError(409, 'invalid_state', 'a discovery job is already running', [
        { field: 'job_id', code: 'duplicate', message: running.job.job_id },
      ])
    }
    const job: DiscoveryJob = {
      job_id: randomUUID(),
      datasource_id: datasourceId,
      action,
      status: 'running',
      result: null,
      error: null,
      started_at: new Date().toISOString(),
      finished_at: null,
      tables_done: null,
      tables_total: null,
    }
    const controller = new AbortController()
    const entry: Entry = { job, controller, committing: false }
    const control: DiscoveryJobControl = {
      signal: controller.signal,
      beginCommit: () => {
        if (job.status !== 'running') return false
        entry.committing = true
        return true
      },
      progress: (done, total) => {
        if (job.status !== 'running') return
        job.tables_done = done
        job.tables_total = total
      },
    }
    void Promise.resolve()
      .then(() => work(control))
      .then(
        (result) => this.#finish(entry, 'completed', result, null),
        (error: unknown) => this.#finish(entry, 'failed', null, messageOf(error)),
      )
    this.#jobs.set(job.job_id, entry)
    return { ...job }
  }

  /** A job of the datasource; 404 when unknown, expired or on another datasource. */
  get(datasourceId: string, jobId: string): DiscoveryJob {
    return { ...this.#entry(datasourceId, jobId).job }
  }

  /** Cancels a running job: 404 as `get`; 409 invalid_state when it is not running. */
  cancel(datasourceId: string, jobId: string): void {
    const entry = this.#entry(datasourceId, jobId)
    if (entry.job.status !== 'running') {
      throw new ApiError(409, 'invalid_state', `the job is ${entry.job.status}, not running`)
    }
    if (entry.committing) {
      throw new ApiError(409, 'invalid_state', 'the job is saving its result and cannot stop')
    }
    this.#abort(entry)
  }

  /** Cancels the running job of a deleted datasource, whatever its phase. */
  cancelDatasource(datasourceId: string): void {
    for (const entry of this.#jobs.values()) {
      if (entry.job.datasource_id === datasourceId && entry.job.status === 'running') {
        this.#abort(entry)
      }
    }
  }

  #abort(entry: Entry): void {
    this.#finish(entry, 'cancelled', null, null)
    entry.controller.abort()
  }

  #finish(entry: Entry, status: DiscoveryJobStatus, result: unknown, error: string | null): void {
    // The first outcome wins: work that ends after a cancel does not revive the job.
    if (entry.job.status !== 'running') return
    entry.job.status = status
    entry.job.result = status === 'completed' ? result : null
    entry.job.error = status === 'failed' ? error : null
    entry.job.finished_at = new Date().toISOString()
  }

  #entry(datasourceId: string, jobId: string): Entry {
    this.#prune()
    const entry = this.#jobs.get(jobId)
    if (!entry || entry.job.datasource_id !== datasourceId) {
      throw new ApiError(404, 'not_found', 'discovery job not found')
    }
    return entry
  }

  #prune(): void {
    const cutoff = Date.now() - this.#retentionMs
    for (const [id, entry] of this.#jobs) {
      const finished = entry.job.finished_at
      if (finished !== null && Date.parse(finished) < cutoff) this.#jobs.delete(id)
    }
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message === '' ? 'discovery failed' : message
}
