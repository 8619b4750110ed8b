import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { text, uuid } from './common.js'

/** 60 s to 90 days (the store's bounds; docs/policies.md "Requested access"). */
const duration = v.pipe(
  v.number('expected an integer'),
  v.integer('expected an integer'),
  v.minValue(60, 'must be at least 60 seconds'),
  v.maxValue(90 * 24 * 3600, 'must be at most 7776000 seconds (90 days)'),
)

/** `duration`: the same as ISO 8601 (`PT8H`, `P1DT12H`, `P2W`) or seconds. */
const durationAlias = v.optional(
  v.union([v.number(), v.string()], 'expected seconds or an ISO 8601 duration'),
)

/**
 * Body of `POST /access-requests`: exactly one of `role_id` and `datasource_id`, and the time as
 * `duration_seconds` or `duration` (the store says which is missing).
 */
export const createAccessRequestBody = v.object({
  role_id: v.nullish(uuid),
  datasource_id: v.nullish(uuid),
  duration_seconds: v.optional(duration),
  duration: durationAlias,
  reason: text(1, 2000),
})

/** Body of `POST /access-requests/{id}/approve`: a shorter duration and a comment, both optional. */
export const approveAccessRequestBody = v.object({
  duration_seconds: v.optional(duration),
  duration: durationAlias,
  comment: v.nullish(text(0, 2000)),
})

/** Body of `POST /access-requests/{id}/deny`. */
export const denyAccessRequestBody = v.object({ comment: v.nullish(text(0, 2000)) })

/** Query of `GET /access-requests`. */
export const listAccessRequestsQuery = v.object({
  ...pageQuery,
  status: v.optional(v.picklist(['pending', 'approved', 'denied', 'cancelled'], 'is not a status')),
  user_id: v.optional(uuid),
})
