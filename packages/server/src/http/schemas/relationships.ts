import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { uuid } from './common.js'

/** Body of `POST /datasources/{id}/relationships` (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const createRelationshipBody = bodySchemas.relationship

/** Body of `POST /datasources/{id}/column-anchors`; "exactly one of" is checked by the store. */
export const createAnchorBody = bodySchemas.anchor

/** Query of `GET /datasources/{id}/relationships`. */
export const listRelationshipsQuery = v.object({ child_table_id: v.optional(uuid) })

/** `{id}/relationships/{relationship_id}` path. */
export const relationshipParams = v.object({ id: uuid, relationship_id: uuid })

/** `{id}/column-anchors/{anchor_id}` path. */
export const anchorParams = v.object({ id: uuid, anchor_id: uuid })
