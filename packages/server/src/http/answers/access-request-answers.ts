import type { AccessRequest } from '@palisade/store'
import * as v from 'valibot'
import {
  answerOf,
  id,
  instant,
  nullableId,
  nullableInstant,
  nullableString,
  pageOf,
} from './answer-of.js'

/** A user's request for a role or a datasource (docs/policies.md#requested-access). */
export const accessRequestAnswer = answerOf<AccessRequest>()(
  v.strictObject({
    id,
    user_id: id,
    username: v.string(),
    kind: v.picklist(['role', 'datasource']),
    role_id: nullableId,
    role_name: nullableString,
    datasource_id: nullableId,
    datasource_name: nullableString,
    reason: v.string(),
    duration_seconds: v.number(),
    status: v.picklist(['pending', 'approved', 'denied', 'cancelled']),
    decided_by: nullableId,
    decided_at: nullableInstant,
    decision_comment: nullableString,
    granted_until: nullableInstant,
    created_at: instant,
    updated_at: instant,
  }),
)

export const accessRequestPageAnswer = pageOf(accessRequestAnswer)
