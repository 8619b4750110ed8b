import { POLICY_ENFORCEMENTS, POLICY_TYPES, policyTargetSchema } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { dateTime } from './audit.js'
import { optionalBoolean, policyName, search, text, uuid } from './common.js'

const target = policyTargetSchema
const expression = v.nullish(text(0, 10_000))

const policyFields = {
  name: policyName,
  policy_type: v.picklist(POLICY_TYPES, 'is not a policy type'),
  targets: v.pipe(
    v.array(target, 'expected an array'),
    v.minLength(1, 'needs at least one target'),
    v.maxLength(50, 'allows at most 50 targets'),
  ),
  description: v.nullish(text(0, 1000)),
  filter_expression: expression,
  mask_expression: expression,
  decision_function_id: v.nullish(uuid),
  is_enabled: optionalBoolean,
  enforcement: v.nullish(v.picklist(POLICY_ENFORCEMENTS, 'expected enforce or shadow')),
  definition: v.nullish(v.object({ filter_expression: expression, mask_expression: expression })),
}

const version = v.pipe(v.number('expected an integer'), v.integer('expected an integer'))

/** Body of `POST /policies`. */
export const createPolicyBody = v.object(policyFields)

/** Body of `PUT`/`PATCH /policies/{id}`: `version` is required (optimistic concurrency). */
export const updatePolicyBody = v.object({ ...v.partial(v.object(policyFields)).entries, version })

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
  policy_type: v.optional(v.picklist(POLICY_TYPES, 'is not a policy type')),
})
