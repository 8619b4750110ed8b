import { type Datasource, DS_TYPES, POOL_MODES } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableInstant, pageOf } from './answer-of.js'

/** A datasource (docs/resources.md#datasources); its secrets only as `*_set` flags. */
export const datasourceAnswer = answerOf<Datasource>()(
  v.strictObject({
    id,
    name: v.string(),
    ds_type: v.picklist(DS_TYPES),
    config: v.looseObject({ password_set: v.optional(v.boolean()) }),
    access_mode: v.picklist(['open', 'policy_required']),
    is_active: v.boolean(),
    statement_timeout_ms: v.number(),
    pool_size: v.number(),
    pool_mode: v.nullable(v.picklist(POOL_MODES)),
    classification_sampling: v.boolean(),
    last_sync_at: nullableInstant,
    last_sync_result: v.unknown(),
    created_at: instant,
    updated_at: instant,
  }),
)

export const datasourcePageAnswer = pageOf(datasourceAnswer)

const configField = v.strictObject({
  key: v.string(),
  label: v.string(),
  field_type: v.picklist(['text', 'number', 'select', 'textarea']),
  required: v.boolean(),
  is_secret: v.boolean(),
  default_value: v.nullable(v.union([v.string(), v.number()])),
  options: v.optional(v.array(v.string())),
})

/** `GET /datasource-types`: each type with the config fields a form for it shows. */
export const datasourceTypesAnswer = v.array(
  v.strictObject({ ds_type: v.string(), label: v.string(), fields: v.array(configField) }),
)
