import type { DecisionFunction } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableId, nullableString, pageOf } from './answer-of.js'

/** A decision function (docs/decision-functions.md), source included. */
export const decisionFunctionAnswer = answerOf<DecisionFunction>()(
  v.strictObject({
    id,
    name: v.string(),
    description: nullableString,
    language: v.literal('javascript'),
    decision_fn: v.string(),
    decision_config: v.unknown(),
    evaluate_context: v.picklist(['session', 'query']),
    on_error: v.picklist(['deny', 'skip']),
    log_level: v.picklist(['off', 'error', 'info']),
    is_enabled: v.boolean(),
    version: v.number(),
    policy_count: v.number(),
    module_size_bytes: v.nullable(v.number()),
    created_by: nullableId,
    updated_by: nullableId,
    created_at: instant,
    updated_at: instant,
  }),
)

export const decisionFunctionPageAnswer = pageOf(decisionFunctionAnswer)
