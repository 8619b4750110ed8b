import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { search, uuid } from './common.js'

/** Password rule of docs/resources.md#users. */
export const password = bodySchemas.user.password

/** Body of `POST /users`. */
export const createUserBody = bodySchemas.user.create

/** Body of `PUT`/`PATCH /users/{id}`; `password` is refused by the store with `not_allowed`. */
export const updateUserBody = bodySchemas.user.update

/** Body of `PUT /users/{id}/password`. */
export const passwordBody = v.object({ password })

/** Query of `GET /users`. */
export const listUsersQuery = v.object({ ...pageQuery, search })

/** Query of `GET /users/{id}/effective-policies`. */
export const effectivePoliciesQuery = v.object({ datasource_id: uuid })
