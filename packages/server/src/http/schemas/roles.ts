import { windowFields } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { identName, idList, optionalBoolean, search, text, uuid } from './common.js'

const roleFields = {
  name: identName,
  description: v.nullish(text(0, 500)),
  is_active: optionalBoolean,
}

/** Body of `POST /roles`. */
export const createRoleBody = v.object(roleFields)

/** Body of `PUT`/`PATCH /roles/{id}`. */
export const updateRoleBody = v.partial(v.object(roleFields))

/** Body of `POST /roles/{id}/members`: 1-1000 user ids and an optional validity window. */
export const addMembersBody = v.object({ user_ids: idList(1000, 1), ...windowFields })

/** Body of `PUT /roles/{id}/members/{user_id}`: the membership's validity window. */
export const putMemberBody = v.object(windowFields)

/** Body of `POST /roles/{id}/parents`. */
export const addParentBody = v.object({ parent_role_id: uuid })

/** `{id}/members/{user_id}` path. */
export const memberParams = v.object({ id: uuid, user_id: uuid })

/** `{id}/parents/{parent_id}` path. */
export const parentParams = v.object({ id: uuid, parent_id: uuid })

/** Query of `GET /roles`. */
export const listRolesQuery = v.object({ ...pageQuery, search })
