import type { Anchor, Relationship } from '@palisade/store'
import * as v from 'valibot'
import type { FkSuggestion } from '../../discovery/fk-suggestions.js'
import { answerOf, id, instant, nullableId, nullableString } from './answer-of.js'

/** The two ends of a relationship, as stored and as suggested from foreign keys. */
const ends = {
  child_table_id: id,
  child_schema_name: v.string(),
  child_table_name: v.string(),
  child_column_name: v.string(),
  parent_table_id: id,
  parent_schema_name: v.string(),
  parent_table_name: v.string(),
  parent_column_name: v.string(),
}

/** A child-to-parent relationship (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const relationshipAnswer = answerOf<Relationship>()(
  v.strictObject({
    id,
    data_source_id: id,
    ...ends,
    created_by: nullableId,
    created_at: instant,
  }),
)

export const relationshipListAnswer = v.array(relationshipAnswer)

/** A column anchor: where a row filter's column is found for a table without it. */
export const anchorAnswer = answerOf<Anchor>()(
  v.strictObject({
    id,
    data_source_id: id,
    child_table_id: id,
    child_schema_name: v.string(),
    child_table_name: v.string(),
    resolved_column_name: v.string(),
    relationship_id: nullableId,
    actual_column_name: nullableString,
    created_by: nullableId,
    created_at: instant,
  }),
)

export const anchorListAnswer = v.array(anchorAnswer)

/** `GET /datasources/{id}/fk-suggestions`: relationships the upstream's foreign keys suggest. */
export const fkSuggestionsAnswer = v.array(
  answerOf<FkSuggestion>()(
    v.strictObject({ ...ends, constraint_name: v.string(), already_added: v.boolean() }),
  ),
)
