import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { search, uuid } from './common.js'

const ENTITY_TYPES = ['user', 'table', 'column'] as const

/** Body of `POST /attribute-definitions`. */
export const createAttributeBody = bodySchemas.attribute.create

/**
 * Body of `PUT`/`PATCH /attribute-definitions/{id}`. `key` and `entity_type` are accepted as
 * any value here: sending a different one is a 422 `immutable`, decided by the store.
 */
export const updateAttributeBody = v.object({
  ...bodySchemas.attribute.update.entries,
  key: v.optional(v.unknown()),
  entity_type: v.optional(v.unknown()),
})

/** Query of `GET /attribute-definitions`. */
export const listAttributesQuery = v.object({
  ...pageQuery,
  search,
  entity_type: v.optional(v.picklist(ENTITY_TYPES, 'expected user, table or column')),
})

/** Query of `DELETE /attribute-definitions/{id}`. */
export const deleteAttributeQuery = v.object({
  force: v.optional(v.picklist(['true', 'false'], 'expected true or false')),
})

/** `{id}` of an attribute definition. */
export const attributeParams = v.object({ id: uuid })
