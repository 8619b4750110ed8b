import * as v from 'valibot'
import { text, uuid } from './common.js'

/** Body of `PUT /datasources/{id}/tags`: one table's (no column) or column's whole tag set. */
export const setTagsBody = v.object({
  schema_name: text(1, 128),
  table_name: text(1, 128),
  column_name: v.nullish(text(1, 128)),
  tags: v.pipe(
    v.array(v.pipe(v.string('expected a string'), v.maxLength(100, 'at most 100 characters'))),
    v.maxLength(50, 'at most 50 tags'),
  ),
})

/** Query of `GET /datasources/{id}/tags`. */
export const listTagsQuery = v.object({ tag: v.optional(v.string()) })

/** Query of `GET /datasources/{id}/tag-proposals`. */
export const listProposalsQuery = v.object({
  status: v.optional(
    v.picklist(
      ['pending', 'accepted', 'rejected', 'all'],
      'expected pending, accepted, rejected or all',
    ),
  ),
})

/** `{id}/tag-proposals/{proposal_id}` path. */
export const proposalParams = v.object({ id: uuid, proposal_id: uuid })

/** Query of `DELETE /datasources/{id}/tags`: one tag off one table or column. */
export const removeTagQuery = v.object({
  schema_name: text(1, 128),
  table_name: text(1, 128),
  column_name: v.optional(text(1, 128)),
  tag: text(1, 100),
})
