import * as v from 'valibot'

/** Body of `POST /auth/login` (docs/admin-api.md#signing-in). */
export const loginBody = v.object({
  username: v.string('expected a string'),
  password: v.string('expected a string'),
})
