import * as v from 'valibot'

/** Body of `POST /auth/login` (admin-api 2). */
export const loginBody = v.object({
  username: v.string('expected a string'),
  password: v.string('expected a string'),
})
