import * as v from 'valibot'

/** Body of `POST /auth/login` (docs/admin-api.md#signing-in). */
export const loginBody = v.object({
  username: v.string('expected a string'),
  password: v.string('expected a string'),
})

/** Body of `POST /auth/sso/start` (docs/sso.md#console-sign-in). */
export const ssoStartBody = v.object({ provider_id: v.pipe(v.string(), v.uuid('expected a uuid')) })

const param = v.optional(v.pipe(v.string('expected a string'), v.maxLength(4096)))

/** Body of `POST /auth/sso/callback`: the query parameters of the provider's redirect. */
export const ssoCallbackBody = v.object({
  state: v.pipe(v.string('expected a string'), v.minLength(1), v.maxLength(512)),
  code: param,
  iss: param,
  error: param,
  error_description: param,
})
