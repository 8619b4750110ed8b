import {
  type AdminAuditEntry,
  AUDIT_ACTIONS,
  AUDIT_RESOURCE_TYPES,
  type AuditVerification,
  type LoginAuditEntry,
  type QueryAuditEntry,
  type QueryAuditTimeline,
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

/** `GET /audit/queries/timeline`: statements per hour and status, every hour of the window. */
export const queryAuditTimelineAnswer = answerOf<QueryAuditTimeline>()(
  v.strictObject({
    bucket_seconds: v.number(),
    from: instant,
    to: instant,
    buckets: v.array(
      v.strictObject({
        start: instant,
        success: v.number(),
        error: v.number(),
        denied: v.number(),
      }),
    ),
  }),
)

const auditLogName = v.picklist(['admin', 'queries'])

/** `GET /audit/verify`: every hash chain of both logs checked, and the first break if any. */
export const auditVerificationAnswer = answerOf<AuditVerification>()(
  v.strictObject({
    ok: v.boolean(),
    logs: v.array(
      v.strictObject({
        log: auditLogName,
        entries: v.number(),
        chains: v.number(),
        unchained: v.number(),
      }),
    ),
    first_broken: v.nullable(
      v.strictObject({
        log: auditLogName,
        chain_id: nullableString,
        chain_seq: v.nullable(v.number()),
        entry_id: v.string(),
        reason: v.string(),
      }),
    ),
  }),
)

/** A line of an NDJSON export: the entry with its hash-chain link. */
const exportLink = {
  chain_id: nullableString,
  chain_seq: v.nullable(v.number()),
  prev_hash: nullableString,
  hash: nullableString,
}

/** `GET /audit/queries/export` and `/audit/admin/export`: NDJSON lines or CSV text. */
export const queryAuditExportMedia = {
  'application/x-ndjson': {
    schema: v.strictObject({ ...queryAuditAnswer.entries, ...exportLink }),
    lines: true,
  },
  'text/csv': { schema: v.string() },
}

export const adminAuditExportMedia = {
  'application/x-ndjson': {
    schema: v.strictObject({ ...adminAuditAnswer.entries, ...exportLink }),
    lines: true,
  },
  'text/csv': { schema: v.string() },
}
