import {
  type AdminAuditEntry,
  AUDIT_ACTIONS,
  AUDIT_RESOURCE_TYPES,
  type LoginAuditEntry,
  type QueryAuditEntry,
} from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableId, nullableString, pageOf } from './answer-of.js'

/** A query-audit entry (docs/audit.md#query-audit); policy lists are JSON text. */
export const queryAuditAnswer = answerOf<QueryAuditEntry>()(
  v.strictObject({
    id,
    user_id: id,
    username: v.string(),
    data_source_id: id,
    datasource_name: v.string(),
    original_query: v.string(),
    rewritten_query: nullableString,
    policies_applied: v.string(),
    execution_time_ms: v.nullable(v.number()),
    client_info: nullableString,
    status: v.picklist(['success', 'error', 'denied']),
    error_message: nullableString,
    shadow_policies: nullableString,
    shadow_denied: v.nullable(v.boolean()),
    created_at: instant,
  }),
)

export const queryAuditPageAnswer = pageOf(queryAuditAnswer)

/** An admin-audit entry (docs/audit.md#admin-audit); `changes` is JSON text. */
export const adminAuditAnswer = answerOf<AdminAuditEntry>()(
  v.strictObject({
    id,
    resource_type: v.picklist(AUDIT_RESOURCE_TYPES),
    resource_id: v.string(),
    action: v.picklist(AUDIT_ACTIONS),
    actor_id: v.string(),
    changes: nullableString,
    created_at: instant,
  }),
)

export const adminAuditPageAnswer = pageOf(adminAuditAnswer)

/** A login-audit entry: a failed or throttled login, or a cleared throttle. */
export const loginAuditAnswer = answerOf<LoginAuditEntry>()(
  v.strictObject({
    id,
    plane: v.picklist(['admin', 'data']),
    outcome: v.picklist(['failed', 'throttled', 'cleared']),
    reason: v.string(),
    username: nullableString,
    client_address: nullableString,
    datasource_name: nullableString,
    actor_id: nullableId,
    created_at: instant,
  }),
)

export const loginAuditPageAnswer = pageOf(loginAuditAnswer)
