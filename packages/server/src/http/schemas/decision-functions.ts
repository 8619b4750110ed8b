import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { jsonObject, optionalBoolean, policyName, search, text } from './common.js'

const source = v.pipe(
  v.string('expected a string'),
  v.check((s) => s.trim() !== '', 'must not be blank'),
  v.check((s) => Buffer.byteLength(s) <= 65_536, 'must be at most 64 KiB'),
)
const evaluateContext = v.picklist(['session', 'query'], 'expected session or query')

const fnFields = {
  name: policyName,
  description: v.nullish(text(0, 1000)),
  language: v.nullish(v.literal('javascript', 'only javascript is supported')),
  decision_fn: source,
  decision_config: v.optional(v.unknown()),
  evaluate_context: evaluateContext,
  on_error: v.nullish(v.picklist(['deny', 'skip'], 'expected deny or skip')),
  log_level: v.nullish(v.picklist(['off', 'error', 'info'], 'expected off, error or info')),
  is_enabled: optionalBoolean,
}

/** Body of `POST /decision-functions`. */
export const createDecisionFunctionBody = v.object(fnFields)

/** Body of `PUT`/`PATCH /decision-functions/{id}`: `version` is required. */
export const updateDecisionFunctionBody = v.object({
  ...v.partial(v.object(fnFields)).entries,
  version: v.pipe(v.number('expected an integer'), v.integer('expected an integer')),
})

/** Body of `POST /decision-functions/test`, with its alternate spellings (docs/decision-functions.md). */
export const testDecisionFunctionBody = v.object({
  decision_fn: source,
  decision_config: v.optional(v.unknown()),
  config: v.optional(v.unknown()),
  evaluate_context: v.nullish(evaluateContext),
  test_context: v.nullish(jsonObject),
  context: v.nullish(jsonObject),
})

/** Query of `GET /decision-functions`. */
export const listDecisionFunctionsQuery = v.object({ ...pageQuery, search })
