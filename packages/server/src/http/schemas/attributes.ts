import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { search, text, uuid } from './common.js'

const ENTITY_TYPES = ['user', 'table', 'column'] as const
const VALUE_TYPES = ['string', 'integer', 'boolean', 'list'] as const

const attributeFields = {
  key: v.pipe(text(1, 64), v.regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'must match [A-Za-z][A-Za-z0-9_]*')),
  entity_type: v.picklist(ENTITY_TYPES, 'expected user, table or column'),
  value_type: v.picklist(VALUE_TYPES, 'expected string, integer, boolean or list'),
  display_name: v.nullish(text(1, 100)),
  /** Checked against `value_type` and `allowed_values` by the store (docs/resources.md#attribute-definitions). */
  default_value: v.optional(v.unknown()),
  allowed_values: v.nullish(
    v.pipe(v.array(v.unknown(), 'expected an array'), v.maxLength(1000, 'allows at most 1000')),
  ),
  description: v.nullish(text(0, 1000)),
}

/** Body of `POST /attribute-definitions`. */
export const createAttributeBody = v.object(attributeFields)

/**
 * Body of `PUT`/`PATCH /attribute-definitions/{id}`. `key` and `entity_type` are accepted as
 * any value here: sending a different one is a 422 `immutable`, decided by the store.
 */
export const updateAttributeBody = v.partial(
  v.object({ ...attributeFields, key: v.unknown(), entity_type: v.unknown() }),
)

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
