import * as v from 'valibot'
import { text, uuid } from './common.js'

/** Body of `POST /datasources/{id}/relationships` (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const createRelationshipBody = v.object({
  child_table_id: uuid,
  child_column_name: text(1, 63),
  parent_table_id: uuid,
  parent_column_name: text(1, 63),
})

/** Body of `POST /datasources/{id}/column-anchors`; "exactly one of" is checked by the store. */
export const createAnchorBody = v.object({
  child_table_id: uuid,
  resolved_column_name: v.pipe(
    text(1, 63),
    v.check((s) => s.trim() !== '', 'must not be blank'),
  ),
  relationship_id: v.nullish(uuid),
  actual_column_name: v.nullish(v.string('expected a string')),
})

/** Query of `GET /datasources/{id}/relationships`. */
export const listRelationshipsQuery = v.object({ child_table_id: v.optional(uuid) })

/** `{id}/relationships/{relationship_id}` path. */
export const relationshipParams = v.object({ id: uuid, relationship_id: uuid })

/** `{id}/column-anchors/{anchor_id}` path. */
export const anchorParams = v.object({ id: uuid, anchor_id: uuid })
