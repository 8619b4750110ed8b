import { bodySchemas, windowFields } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { idList, search, uuid } from './common.js'

/** Body of `POST /roles`. */
export const createRoleBody = bodySchemas.role.create

/** Body of `PUT`/`PATCH /roles/{id}`. */
export const updateRoleBody = bodySchemas.role.update

/** Body of `POST /roles/{id}/members`: 1-1000 user ids and an optional validity window. */
export const addMembersBody = v.object({ user_ids: idList(1000, 1), ...windowFields })

/** Body of `PUT /roles/{id}/members/{user_id}`: the membership's validity window. */
export const putMemberBody = v.object(windowFields)

/** Body of `POST /roles/{id}/parents`. */
export const addParentBody = bodySchemas.role.parent

/** `{id}/members/{user_id}` path. */
export const memberParams = v.object({ id: uuid, user_id: uuid })

/** `{id}/parents/{parent_id}` path. */
export const parentParams = v.object({ id: uuid, parent_id: uuid })

/** Query of `GET /roles`. */
export const listRolesQuery = v.object({ ...pageQuery, search })
