import type { AccessWindow, DatasourceAccessSummary, User } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant } from './answer-of.js'
import { userAnswer } from './user-answers.js'

/** The window of a time-bound grant or membership (absent or null for a lasting one). */
const window = {
  valid_from: v.optional(v.nullable(instant)),
  valid_until: v.optional(v.nullable(instant)),
}

/** A role with a grant's or membership's window: `…/access/roles`, `GET /users/{id}/roles`. */
const windowedRole = v.strictObject({ id, name: v.string(), is_active: v.boolean(), ...window })
export const windowedRolesAnswer = v.array(
  answerOf<{ id: string; name: string; is_active: boolean } & AccessWindow>()(windowedRole),
)

/** `GET /datasources/{id}/users`: the users with direct access, with their windows. */
export const accessUsersAnswer = v.array(
  answerOf<User & AccessWindow>()(v.strictObject({ ...userAnswer.entries, ...window })),
)

/** `GET /datasources/{id}/access`: every way in, in one answer. */
export const accessSummaryAnswer = answerOf<DatasourceAccessSummary>()(
  v.strictObject({
    datasource_id: id,
    all: v.boolean(),
    users: v.array(v.strictObject({ id, username: v.string(), ...window })),
    roles: v.array(windowedRole),
  }),
)
