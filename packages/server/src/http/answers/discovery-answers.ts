import * as v from 'valibot'
import type { DiscoveryJob } from '../../discovery/discovery-jobs.js'
import { answerOf, id, instant, nullableInstant, nullableString } from './answer-of.js'

/** `POST /datasources/{id}/discover`: the job to poll. */
export const discoveryStartedAnswer = v.strictObject({ job_id: id })

const count = v.nullable(v.number())

/** `GET /datasources/{id}/discover/{job_id}`: a job's state; `result` is the action's own. */
export const discoveryJobAnswer = answerOf<DiscoveryJob>()(
  v.strictObject({
    job_id: id,
    datasource_id: id,
    action: v.string(),
    status: v.picklist(['running', 'completed', 'failed', 'cancelled']),
    result: v.unknown(),
    error: nullableString,
    started_at: instant,
    finished_at: nullableInstant,
    tables_done: count,
    tables_total: count,
  }),
)
