import type { AttributeDefinitionRecord } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableId, nullableString, pageOf } from './answer-of.js'

/** An attribute definition (docs/resources.md#attribute-definitions). */
export const attributeAnswer = answerOf<AttributeDefinitionRecord>()(
  v.strictObject({
    id,
    key: v.string(),
    entity_type: v.string(),
    display_name: v.string(),
    value_type: v.string(),
    default_value: v.unknown(),
    allowed_values: v.nullable(v.array(v.unknown())),
    description: nullableString,
    created_by: nullableId,
    updated_by: nullableId,
    created_at: instant,
    updated_at: instant,
  }),
)

export const attributePageAnswer = pageOf(attributeAnswer)
