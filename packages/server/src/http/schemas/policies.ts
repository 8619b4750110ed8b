import { bodySchemas, POLICY_TYPES } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { dateTime } from './audit.js'
import { optionalBoolean, search } from './common.js'

/** Body of `POST /policies`. */
export const createPolicyBody = bodySchemas.policy.create

/** Body of `PUT`/`PATCH /policies/{id}`: `version` is required (optimistic concurrency). */
export const updatePolicyBody = bodySchemas.policy.update

/** Body of `POST /policies/validate-expression`. */
export const validateExpressionBody = v.object({
  expression: v.string('expected a string'),
  is_mask: optionalBoolean,
})

/** Query of `GET /policies/{id}/shadow-report`: a window and how many examples. */
export const shadowReportQuery = v.object({
  from: v.optional(dateTime),
  to: v.optional(dateTime),
  examples: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, 'must be an integer from 0 to 100'),
      v.transform(Number),
      v.maxValue(100, 'must be an integer from 0 to 100'),
    ),
  ),
})

/** Query of `GET /policies`. */
export const listPoliciesQuery = v.object({
  ...pageQuery,
  search,
  policy_type: v.optional(v.picklist(POLICY_TYPES, 'unknown policy_type')),
})
