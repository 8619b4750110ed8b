import * as v from 'valibot'
import { id, nullableString } from './answer-of.js'

const tags = v.optional(v.array(v.string()))
const relationName = v.strictObject({ schema: v.string(), table: v.string() })

/** A stored column; `tags` only when it has some. */
const catalogColumnAnswer = v.strictObject({
  id,
  column_name: v.string(),
  ordinal_position: v.number(),
  data_type: v.string(),
  is_nullable: v.boolean(),
  column_default: nullableString,
  is_selected: v.boolean(),
  tags,
})

/**
 * A stored relation: `ancestors` only for inheritance children and partitions, the definition
 * and `expansion` only for relations other than tables (catalog-expansion.ts).
 */
const catalogTableAnswer = v.strictObject({
  id,
  table_name: v.string(),
  table_type: v.string(),
  is_selected: v.boolean(),
  ancestors: v.optional(v.array(relationName)),
  view_definition: v.optional(nullableString),
  expansion: v.optional(
    v.nullable(
      v.strictObject({
        expansion: v.picklist(['expanded', 'fail_closed']),
        reason: nullableString,
        reads: v.nullable(v.array(relationName)),
      }),
    ),
  ),
  tags,
  columns: v.array(catalogColumnAnswer),
})

/** `GET /datasources/{id}/catalog`: one page of tables under their schemas. */
export const catalogPageAnswer = v.strictObject({
  datasource_id: id,
  schemas: v.array(
    v.strictObject({
      id,
      schema_name: v.string(),
      schema_alias: nullableString,
      is_selected: v.boolean(),
      tables: v.array(catalogTableAnswer),
    }),
  ),
  total: v.number(),
  page: v.number(),
  page_size: v.number(),
})
