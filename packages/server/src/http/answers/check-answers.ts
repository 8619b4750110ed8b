import { type EffectivePolicyEntry, POLICY_TYPES, type Store } from '@palisade/store'
import * as v from 'valibot'
import type { ProbeResult } from '../../upstream/upstream-probe.js'
import { answerOf, id, nullableId } from './answer-of.js'

/** `POST /datasources/{id}/test`: the upstream's version, or why it could not be reached. */
export const probeAnswer = answerOf<ProbeResult>()(
  v.union([
    v.strictObject({ success: v.literal(true), server_version: v.string() }),
    v.strictObject({ success: v.literal(false), message: v.string() }),
  ]),
)

/** `POST /policies/validate-expression`: the variables it uses, or the parse error. */
export const expressionCheckAnswer = answerOf<
  Awaited<ReturnType<Store['policies']['validateExpression']>>
>()(
  v.union([
    v.strictObject({
      valid: v.literal(true),
      variables: v.array(v.string()),
      undefined_attributes: v.array(v.string()),
    }),
    v.strictObject({ valid: v.literal(false), error: v.string() }),
  ]),
)

/** `GET /users/{id}/effective-policies`: every assignment on the datasource and whether it applies. */
export const effectivePoliciesAnswer = v.array(
  answerOf<EffectivePolicyEntry>()(
    v.strictObject({
      assignment_id: id,
      policy_id: id,
      policy_name: v.string(),
      policy_type: v.picklist(POLICY_TYPES),
      version: v.number(),
      is_enabled: v.boolean(),
      enforcement: v.picklist(['enforce', 'shadow']),
      decision_function_id: nullableId,
      datasource_id: id,
      datasource_name: v.string(),
      scope: v.picklist(['user', 'role', 'all']),
      priority: v.number(),
      source: v.string(),
      source_role_id: nullableId,
      applies: v.boolean(),
    }),
  ),
)

/** `POST /decision-functions/test`: `result` is absent after a compile error. */
export const decisionTestAnswer = v.strictObject({
  success: v.boolean(),
  result: v.optional(
    v.strictObject({
      fire: v.optional(v.boolean()),
      fuel_consumed: v.number(),
      time_us: v.number(),
      logs: v.array(v.string()),
    }),
  ),
  error: v.optional(v.string()),
})
