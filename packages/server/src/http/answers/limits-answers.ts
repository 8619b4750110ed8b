import type { Limits } from '@palisade/store'
import * as v from 'valibot'
import { answerOf } from './answer-of.js'

const count = v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))))

/** The `limits` of a user or role (docs/roles-and-access.md#limits): only the keys set. */
export const limitsFields = answerOf<Limits>()(
  v.strictObject({
    max_rows_per_statement: count,
    on_row_limit: v.optional(v.picklist(['error', 'truncate'])),
    max_statements_per_minute: count,
    max_concurrent_statements: count,
  }),
)

/** A user's or role's own limits; null when none is set. */
export const limitsAnswer = v.nullable(limitsFields)

const effectiveCount = v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))

/** `GET /users/{id}/effective-limits`: what the data plane applies, every key (null: none). */
export const effectiveLimitsAnswer = answerOf<Required<Limits>>()(
  v.strictObject({
    max_rows_per_statement: effectiveCount,
    on_row_limit: v.picklist(['error', 'truncate']),
    max_statements_per_minute: effectiveCount,
    max_concurrent_statements: effectiveCount,
  }),
)
