import type { User } from '@palisade/store'
import * as v from 'valibot'
import {
  answerOf,
  anyObject,
  id,
  instant,
  nullableInstant,
  nullableString,
  pageOf,
} from './answer-of.js'
import { limitsAnswer } from './limits-answers.js'

/** A user (docs/resources.md#users); never a password or verifier. */
export const userAnswer = answerOf<User>()(
  v.strictObject({
    id,
    username: v.string(),
    is_admin: v.boolean(),
    is_active: v.boolean(),
    email: nullableString,
    display_name: nullableString,
    attributes: anyObject,
    limits: limitsAnswer,
    last_login_at: nullableInstant,
    password_changed_at: instant,
    created_at: instant,
    updated_at: instant,
  }),
)

export const userPageAnswer = pageOf(userAnswer)

/** `POST /auth/login`. */
export const loginAnswer = v.strictObject({
  token: v.string(),
  token_type: v.literal('Bearer'),
  expires_at: instant,
  user: userAnswer,
})

/** `POST` and `GET /auth/session`: the console's session, without its token. */
export const sessionAnswer = v.strictObject({
  csrf_token: v.string(),
  expires_at: instant,
  user: userAnswer,
})
