import type { IdentityProvider } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableString, pageOf } from './answer-of.js'

/** An identity provider as every route answers it; the client secret only as whether it is set. */
export const identityProviderAnswer = answerOf<IdentityProvider>()(
  v.strictObject({
    id,
    name: v.string(),
    issuer: v.string(),
    client_id: v.string(),
    client_secret_set: v.boolean(),
    audiences: v.array(v.string()),
    username_claim: nullableString,
    role_claim: v.string(),
    attribute_mappings: v.array(v.strictObject({ claim: v.string(), attribute: v.string() })),
    role_mappings: v.array(v.strictObject({ value: v.string(), role_id: id })),
    jit_users: v.boolean(),
    is_active: v.boolean(),
    console_sign_in: v.boolean(),
    admin_claim: v.nullable(v.strictObject({ claim: v.string(), value: v.string() })),
    created_at: instant,
    updated_at: instant,
  }),
)

export const identityProviderPageAnswer = pageOf(identityProviderAnswer)

/** A provider as the console's sign-in page lists it: enough to draw its button. */
export const consoleSignInProviderAnswer = v.strictObject({ id, name: v.string() })

/** `GET /auth/sso/providers`. */
export const consoleSignInProvidersAnswer = v.strictObject({
  data: v.array(consoleSignInProviderAnswer),
})

/** `POST /auth/sso/start`: where the browser goes next. */
export const consoleSignInStartAnswer = v.strictObject({ authorization_url: v.string() })
