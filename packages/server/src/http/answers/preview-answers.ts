import * as v from 'valibot'
import type { PreviewResult } from '../../preview/preview-session.js'
import { answerOf, id, nullableString } from './answer-of.js'

/** A policy a statement or table considered, with its decision function's record if one ran. */
export const appliedPolicyAnswer = v.strictObject({
  policy_id: id,
  version: v.number(),
  name: v.string(),
  decision: v.nullable(
    v.strictObject({
      result: v.strictObject({ fire: v.boolean(), fuel_consumed: v.number(), time_us: v.number() }),
      logs: v.array(v.string()),
      error: nullableString,
    }),
  ),
})

/** A refusal or upstream error as the client would see it, with the audit's wording. */
export const previewErrorAnswer = v.strictObject({
  sqlstate: v.string(),
  message: v.string(),
  detail: nullableString,
  hint: nullableString,
  audit_message: nullableString,
})

/** `POST /preview` (docs/preview-and-simulation.md). */
export const previewAnswer = answerOf<PreviewResult>()(
  v.strictObject({
    user: v.strictObject({ id, username: v.string() }),
    datasource: v.strictObject({ id, name: v.string() }),
    allowed: v.boolean(),
    error: v.nullable(previewErrorAnswer),
    statements: v.array(
      v.strictObject({
        original_sql: v.string(),
        rewritten_sql: v.string(),
        statement_type: v.string(),
        policies_applied: v.array(appliedPolicyAnswer),
        result: v.nullable(
          v.strictObject({
            columns: v.array(v.strictObject({ name: v.string(), type_oid: v.number() })),
            rows: v.array(v.array(v.nullable(v.string()))),
            row_count: v.number(),
            truncated: v.boolean(),
          }),
        ),
        error: v.nullable(previewErrorAnswer),
        not_executed: nullableString,
      }),
    ),
    catalog: v.array(
      v.strictObject({
        name: v.string(),
        tables: v.array(
          v.strictObject({
            name: v.string(),
            kind: v.string(),
            columns: v.array(
              v.strictObject({ name: v.string(), type: v.string(), masked: v.boolean() }),
            ),
            hidden_columns: v.array(v.string()),
            row_filtered: v.boolean(),
            decided_per_query: v.boolean(),
            policies: v.array(appliedPolicyAnswer),
          }),
        ),
      }),
    ),
    decision_logs: v.array(
      v.strictObject({ function_name: v.string(), level: v.string(), message: v.string() }),
    ),
    executed: v.boolean(),
  }),
)
