import * as v from 'valibot'
import { limitsSchema } from '../kernel/limits.js'
import { boundedString, identName, jsonObject } from '../kernel/validation.js'

/** The password rule (docs/resources.md#users). */
export const passwordSchema = v.pipe(
  boundedString(8, 256),
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
  is_admin: v.nullish(v.boolean('expected a boolean')),
  is_active: v.nullish(v.boolean('expected a boolean')),
  email: v.nullish(email),
  display_name: v.nullish(boundedString(0, 100)),
  /** Checked against the attribute definitions (docs/resources.md#users). */
  attributes: v.nullish(jsonObject),
  /** Row and rate limits (docs/roles-and-access.md#limits); null clears them. */
  limits: v.nullish(limitsSchema),
}
/** Body of `POST /users`; `attributes` are checked against their definitions later. */
export const createUserSchema = v.object({ ...userFields, password: passwordSchema })
/** Body of a user update; a `password` in it is refused (`not_allowed`). */
export const updateUserSchema = v.partial(v.object(userFields))
