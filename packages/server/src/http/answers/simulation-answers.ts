import * as v from 'valibot'
import type { SimulationResult } from '../../preview/simulation.js'
import { answerOf, id, instant, nullableString } from './answer-of.js'

const names = v.array(v.string())

/** One side (current or proposed) of a replayed query. */
const outcome = v.strictObject({
  allowed: v.boolean(),
  error: v.nullable(v.strictObject({ sqlstate: v.string(), message: v.string() })),
  rewritten_sql: nullableString,
  policies: names,
  rows: v.nullable(v.number()),
  rows_capped: v.boolean(),
  rows_digest: nullableString,
  columns: v.nullable(names),
  hidden_columns: names,
  masked_columns: names,
})

/** `POST /simulations` (docs/preview-and-simulation.md). */
export const simulationAnswer = answerOf<SimulationResult>()(
  v.strictObject({
    datasource: v.strictObject({ id, name: v.string() }),
    summary: v.strictObject({
      queries: v.number(),
      users: v.number(),
      unchanged: v.number(),
      newly_refused: v.number(),
      newly_allowed: v.number(),
      changed: v.number(),
      fewer_rows: v.number(),
      more_rows: v.number(),
    }),
    queries: v.array(
      v.strictObject({
        user: v.strictObject({ id, username: v.string() }),
        original_sql: v.string(),
        occurrences: v.number(),
        last_run_at: instant,
        before: outcome,
        after: outcome,
        change: v.picklist(['unchanged', 'newly_refused', 'newly_allowed', 'changed']),
        rows_delta: v.nullable(v.number()),
        columns_removed: names,
        columns_masked: names,
        columns_unmasked: names,
      }),
    ),
  }),
)
