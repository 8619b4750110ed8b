import { windowFields } from '@palisade/store'
import * as v from 'valibot'
import { uuid } from './common.js'

/**
 * Body of `POST /datasources/{id}/policies`. `scope` is only a string here: an unknown scope
 * or a bad scope/id combination is a 400 scope_mismatch, which the store checks before this
 * schema's 422 (docs/admin-api.md#errors).
 */
export const assignBody = v.object({
  policy_id: uuid,
  scope: v.nullish(v.string('expected a string')),
  user_id: v.nullish(uuid),
  role_id: v.nullish(uuid),
  priority: v.nullish(
    v.pipe(
      v.number('expected an integer'),
      v.integer('expected an integer'),
      v.minValue(0, 'must be between 0 and 1000000'),
      v.maxValue(1_000_000, 'must be between 0 and 1000000'),
    ),
  ),
  ...windowFields,
})

/** `{id}/policies/{assignment_id}` path. */
export const assignmentParams = v.object({ id: uuid, assignment_id: uuid })
