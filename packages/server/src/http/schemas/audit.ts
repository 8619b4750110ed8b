import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES } from '@palisade/store'
import * as v from 'valibot'
import { auditPageQuery } from '../pagination.js'
import { uuid } from './common.js'

/** RFC 3339 date-time; a value without a zone is read as UTC (docs/resources.md#values). */
export const dateTime = v.pipe(
  v.string(),
  v.regex(
    /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([Zz]|[+-]\d{2}:?\d{2})?$/,
    'must be an RFC 3339 date-time',
  ),
  v.check(
    (s) => !Number.isNaN(Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(s) ? s : `${s}Z`)),
    'must be a valid date-time',
  ),
)

const timeFilters = {
  from: v.optional(dateTime),
  to: v.optional(dateTime),
  since: v.optional(dateTime),
  until: v.optional(dateTime),
}

/** The store's lists, one source for the filters and the OpenAPI enums. */
export { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES }

/** The filters of the query audit, listed or exported (docs/audit.md#reading-the-logs). */
const queryAuditFilters = {
  ...timeFilters,
  user_id: v.optional(uuid),
  datasource_id: v.optional(uuid),
  status: v.optional(
    v.picklist(['success', 'error', 'denied'], 'expected success, error or denied'),
  ),
}

/** The filters of the admin audit, listed or exported (docs/audit.md#reading-the-logs). */
const adminAuditFilters = {
  ...timeFilters,
  resource_type: v.optional(v.picklist(AUDIT_RESOURCE_TYPES, 'is not an audited resource type')),
  resource_id: v.optional(uuid),
  actor_id: v.optional(uuid),
  action: v.optional(v.picklist(AUDIT_ACTIONS, 'is not an audit action')),
}

/** `format` of the export routes: one JSON object per line, or CSV with a header row. */
const exportFormat = {
  format: v.optional(v.picklist(['ndjson', 'csv'], 'expected ndjson or csv')),
}

/** Query of `GET /audit/queries` (docs/audit.md#reading-the-logs). */
export const queryAuditQuery = v.object({ ...auditPageQuery, ...queryAuditFilters })

/** Query of `GET /audit/admin` (docs/audit.md#reading-the-logs). */
export const adminAuditQuery = v.object({ ...auditPageQuery, ...adminAuditFilters })

/** Query of `GET /audit/queries/export`: the list's filters, no paging. */
export const queryAuditExportQuery = v.object({ ...queryAuditFilters, ...exportFormat })

/** Query of `GET /audit/admin/export`: the list's filters, no paging. */
export const adminAuditExportQuery = v.object({ ...adminAuditFilters, ...exportFormat })

/** Query of `GET /audit/queries/timeline`: a window of whole hours, by user or datasource. */
export const queryAuditTimelineQuery = v.object({
  from: v.optional(dateTime),
  to: v.optional(dateTime),
  user_id: v.optional(uuid),
  datasource_id: v.optional(uuid),
})

/** Query of `GET /audit/logins`. */
export const loginAuditQuery = v.object({
  ...auditPageQuery,
  ...timeFilters,
  plane: v.optional(v.picklist(['admin', 'data'], 'expected admin or data')),
  outcome: v.optional(
    v.picklist(['failed', 'throttled', 'cleared'], 'expected failed, throttled or cleared'),
  ),
  username: v.optional(v.pipe(v.string(), v.maxLength(256, 'is too long'))),
  client_address: v.optional(v.pipe(v.string(), v.maxLength(256, 'is too long'))),
})

/** Query of `DELETE /login-throttles`: the keys to clear, at least one. */
export const clearThrottleQuery = v.object({
  address: v.optional(v.pipe(v.string(), v.maxLength(256, 'is too long'))),
  username: v.optional(v.pipe(v.string(), v.maxLength(256, 'is too long'))),
})
