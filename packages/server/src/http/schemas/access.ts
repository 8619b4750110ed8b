import * as v from 'valibot'
import { idList } from './common.js'

/** Body of `PUT /datasources/{id}/users` (admin-api 8). */
export const userAccessBody = v.object({ user_ids: idList(10_000) })

/** Body of `PUT /datasources/{id}/access/roles`. */
export const roleAccessBody = v.object({ role_ids: idList(10_000) })

/** Body of `PUT /datasources/{id}/access/all`. */
export const allAccessBody = v.object({ enabled: v.boolean('expected a boolean') })
