import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { jsonObject, search } from './common.js'

const { decision_fn: source, evaluate_context: evaluateContext } =
  bodySchemas.decisionFunction.create.entries

/** Body of `POST /decision-functions`. */
export const createDecisionFunctionBody = bodySchemas.decisionFunction.create

/** Body of `PUT`/`PATCH /decision-functions/{id}`: `version` is required. */
export const updateDecisionFunctionBody = bodySchemas.decisionFunction.update

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
