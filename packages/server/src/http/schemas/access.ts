import { windowFields } from '@palisade/store'
import * as v from 'valibot'
import { idList, uuid } from './common.js'

/** Body of `PUT /datasources/{id}/users` (docs/roles-and-access.md#datasource-access). */
export const userAccessBody = v.object({ user_ids: idList(10_000) })

/** Body of `PUT /datasources/{id}/access/roles`. */
export const roleAccessBody = v.object({ role_ids: idList(10_000) })

/** Body of `PUT /datasources/{id}/access/all`. */
export const allAccessBody = v.object({ enabled: v.boolean('expected a boolean') })

/** Body of the one-subject grants: an optional validity window (docs/policies.md). */
export const grantWindowBody = v.object(windowFields)

/** `{id}/users/{user_id}` path. */
export const userAccessParams = v.object({ id: uuid, user_id: uuid })

/** `{id}/access/roles/{role_id}` path. */
export const roleAccessParams = v.object({ id: uuid, role_id: uuid })
