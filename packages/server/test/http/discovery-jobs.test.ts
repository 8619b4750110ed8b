import { describe, expect, it } from 'vitest'
import { DiscoveryJobs } from '../../src/discovery/discovery-jobs.js'
import { ApiError } from '../../src/http/api-error.js'

const DS = '0190a0a0-0000-7000-8000-00000000000a'

/** A promise and its resolver, to hold a job's work open. */
function gate<T = void>() {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

async function errorOf(fn: () => unknown): Promise<ApiError> {
  try {
    await fn()
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('expected an ApiError')
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('discovery job registry', () => {
  it('keeps the first outcome: work that ends after a cancel does not revive the job', async () => {
    const jobs = new DiscoveryJobs()
    const done = gate<string>()
    let aborted = false
    const job = jobs.start(DS, 'discover_schemas', ({ signal }) => {
      signal.addEventListener('abort', () => {
        aborted = true
      })
      return done.promise
    })
    await tick()
    jobs.cancel(DS, job.job_id)
    expect(aborted).toBe(true)
    done.open('late result')
    await tick()
    expect(jobs.get(DS, job.job_id)).toMatchObject({ status: 'cancelled', result: null })
  })

  it('refuses to cancel a job that is writing its result', async () => {
    const jobs = new DiscoveryJobs()
    const write = gate()
    const job = jobs.start(DS, 'save_catalog', async ({ beginCommit }) => {
      expect(beginCommit()).toBe(true)
      await write.promise
      return { exposed_tables: 1, exposed_columns: 2 }
    })
    await tick()
    const refused = await errorOf(() => jobs.cancel(DS, job.job_id))
    expect(refused).toMatchObject({ status: 409, code: 'invalid_state' })
    write.open()
    await tick()
    expect(jobs.get(DS, job.job_id)).toMatchObject({
      status: 'completed',
      result: { exposed_tables: 1, exposed_columns: 2 },
    })
  })

  it('does not let cancelled work write', async () => {
    const jobs = new DiscoveryJobs()
    const read = gate()
    let committed: boolean | undefined
    const job = jobs.start(DS, 'sync_catalog', async ({ beginCommit }) => {
      await read.promise
      committed = beginCommit()
    })
    jobs.cancel(DS, job.job_id)
    read.open()
    await tick()
    expect(committed).toBe(false)
  })

  it('records a failure with its message and forgets finished jobs after the retention', async () => {
    const jobs = new DiscoveryJobs({ retentionMs: 20 })
    const sleep = () => new Promise((resolve) => setTimeout(resolve, 30))
    const job = jobs.start(DS, 'discover_schemas', async () => {
      throw new Error('connect ECONNREFUSED')
    })
    await tick()
    expect(jobs.get(DS, job.job_id)).toMatchObject({
      status: 'failed',
      result: null,
      error: 'connect ECONNREFUSED',
    })
    const other = jobs.start(DS, 'discover_tables', () => new Promise(() => {}))
    expect(await errorOf(() => jobs.start(DS, 'x', async () => null))).toMatchObject({
      status: 409,
      details: [{ field: 'job_id', message: other.job_id }],
    })
    await sleep()
    expect(await errorOf(() => jobs.get(DS, job.job_id))).toMatchObject({ status: 404 })
    expect(jobs.get(DS, other.job_id).status).toBe('running')
    jobs.cancelDatasource(DS)
    expect(jobs.get(DS, other.job_id).status).toBe('cancelled')
    await sleep()
    expect(await errorOf(() => jobs.get(DS, other.job_id))).toMatchObject({ status: 404 })
  })
})
