import * as v from 'valibot'
import { id, nullableString } from './answer-of.js'

const text = v.optional(v.string())

/** How one column of a row filter resolves on one table (discovery/anchor-coverage.ts). */
const verdict = v.strictObject({
  column: v.string(),
  kind: v.string(),
  actual_column_name: v.optional(nullableString),
  via_relationship_id: v.optional(id),
  via_child_column: text,
  via_parent_column: text,
  parent_schema: text,
  parent_table: text,
  error: text,
})

/** `GET /policies/{id}/anchor-coverage`: per datasource and table the filter's columns resolve on. */
export const anchorCoverageAnswer = v.strictObject({
  policy_id: id,
  policy_type: v.string(),
  coverage: v.array(
    v.strictObject({
      data_source_id: id,
      data_source_name: v.string(),
      schema: v.string(),
      schema_upstream: v.string(),
      table: v.string(),
      verdicts: v.array(verdict),
    }),
  ),
})
