import {
  type Assignment,
  POLICY_ENFORCEMENTS,
  POLICY_TYPES,
  type Policy,
  policyTargetSchema,
  type ShadowReport,
} from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableId, nullableString, pageOf } from './answer-of.js'

/** A policy assignment (docs/resources.md#assignments), with the names it points to. */
export const assignmentAnswer = answerOf<Assignment>()(
  v.strictObject({
    id,
    assignment_id: id,
    policy_id: id,
    policy_name: v.string(),
    policy_type: v.string(),
    datasource_id: id,
    datasource_name: v.string(),
    scope: v.picklist(['user', 'role', 'all']),
    user_id: nullableId,
    username: nullableString,
    role_id: nullableId,
    role_name: nullableString,
    priority: v.number(),
    valid_from: v.optional(v.nullable(instant)),
    valid_until: v.optional(v.nullable(instant)),
    created_by: nullableId,
    created_at: instant,
  }),
)

/** `GET /datasources/{id}/policies`: the datasource's assignments, a plain array. */
export const assignmentListAnswer = v.array(assignmentAnswer)

/** A stored target: the request's target schema, with the name patterns always present. */
const storedTarget = v.strictObject({
  ...policyTargetSchema.entries,
  schemas: v.array(v.string()),
  tables: v.array(v.string()),
})

/** A policy (docs/resources.md#policies); `assignments` only on `GET /policies/{id}`. */
export const policyAnswer = answerOf<Policy>()(
  v.strictObject({
    id,
    name: v.string(),
    description: nullableString,
    policy_type: v.picklist(POLICY_TYPES),
    targets: v.array(storedTarget),
    filter_expression: nullableString,
    mask_expression: nullableString,
    min_group_size: v.nullable(v.number()),
    allowed_aggregates: v.nullable(v.array(v.string())),
    decision_function_id: nullableId,
    decision_function: v.nullable(
      v.strictObject({
        id,
        name: v.string(),
        is_enabled: v.boolean(),
        evaluate_context: v.string(),
      }),
    ),
    is_enabled: v.boolean(),
    enforcement: v.picklist(POLICY_ENFORCEMENTS),
    version: v.number(),
    assignment_count: v.number(),
    created_by: nullableId,
    updated_by: nullableId,
    created_at: instant,
    updated_at: instant,
    assignments: v.optional(v.array(assignmentAnswer)),
  }),
)

export const policyPageAnswer = pageOf(policyAnswer)

/** `GET /policies/{id}/shadow-report`: what enforcing a shadow policy would have done. */
export const shadowReportAnswer = answerOf<ShadowReport>()(
  v.strictObject({
    policy_id: id,
    from: v.nullable(v.string()),
    to: v.nullable(v.string()),
    statements: v.number(),
    would_deny: v.number(),
    users: v.array(
      v.strictObject({
        user_id: id,
        username: v.string(),
        statements: v.number(),
        would_deny: v.number(),
      }),
    ),
    examples: v.array(
      v.strictObject({
        id,
        created_at: instant,
        username: v.string(),
        datasource_name: v.string(),
        original_query: v.string(),
        would_deny: v.boolean(),
      }),
    ),
  }),
)
