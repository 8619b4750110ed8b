import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { identName, jsonObject, optionalBoolean, search, text, uuid } from './common.js'

/** Password rule of docs/resources.md#users. */
export const password = v.pipe(
  text(8, 256),
  v.regex(/[A-Z]/, 'needs an uppercase letter'),
  v.regex(/[a-z]/, 'needs a lowercase letter'),
  v.regex(/[0-9]/, 'needs a digit'),
  v.regex(/[^A-Za-z0-9]/, 'needs a character that is neither a letter nor a digit'),
)

const email = v.pipe(
  v.string('expected a string'),
  v.maxLength(254, 'must be at most 254 characters'),
  v.includes('@', 'must contain @'),
)

const userFields = {
  username: identName,
  is_admin: optionalBoolean,
  is_active: optionalBoolean,
  email: v.nullish(email),
  display_name: v.nullish(text(0, 100)),
  /** Checked against attribute definitions by the store (docs/resources.md#users). */
  attributes: v.nullish(jsonObject),
}

/** Body of `POST /users`. */
export const createUserBody = v.object({ ...userFields, password })

/** Body of `PUT`/`PATCH /users/{id}`; `password` is refused by the store with `not_allowed`. */
export const updateUserBody = v.partial(v.object(userFields))

/** Body of `PUT /users/{id}/password`. */
export const passwordBody = v.object({ password })

/** Query of `GET /users`. */
export const listUsersQuery = v.object({ ...pageQuery, search })

/** Query of `GET /users/{id}/effective-policies`. */
export const effectivePoliciesQuery = v.object({ datasource_id: uuid })
