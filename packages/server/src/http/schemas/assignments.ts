import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { uuid } from './common.js'

/**
 * Body of `POST /datasources/{id}/policies`. `scope` is only a string here: an unknown scope
 * or a bad scope/id combination is a 400 scope_mismatch, which the store checks before this
 * schema's 422 (docs/admin-api.md#errors).
 */
export const assignBody = bodySchemas.assignment

/** `{id}/policies/{assignment_id}` path. */
export const assignmentParams = v.object({ id: uuid, assignment_id: uuid })
