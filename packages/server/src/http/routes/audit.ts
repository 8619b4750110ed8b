import {
  adminAuditExportMedia,
  adminAuditPageAnswer,
  auditVerificationAnswer,
  loginAuditPageAnswer,
  queryAuditExportMedia,
  queryAuditPageAnswer,
  queryAuditTimelineAnswer,
} from '../answers/audit-answers.js'
import { exportResponse } from '../audit-export.js'
import { oneSpelling, toPageInput } from '../pagination.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import {
  adminAuditExportQuery,
  adminAuditQuery,
  loginAuditQuery,
  queryAuditExportQuery,
  queryAuditQuery,
  queryAuditTimelineQuery,
} from '../schemas/audit.js'

const TAG = 'audit'

/** `from`/`since`, `to`/`until` and `page_size`/`limit` must agree when both are given. */
function timeAndPage(query: Record<string, string | undefined>) {
  const pageSize = oneSpelling(query, 'page_size', 'limit')
  const paging = toPageInput({ page: query['page'], page_size: pageSize })
  return { ...paging, ...timeRange(query) }
}

function timeRange(query: Record<string, string | undefined>) {
  const from = oneSpelling(query, 'from', 'since')
  const to = oneSpelling(query, 'to', 'until')
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
}

/** The query audit's filters (docs/audit.md#reading-the-logs), for its list and its export. */
function queryFilters(query: Record<string, string | undefined>) {
  return {
    ...timeRange(query),
    user_id: query['user_id'],
    datasource_id: query['datasource_id'],
    status: query['status'],
  }
}

/** The admin audit's filters (docs/audit.md#reading-the-logs), for its list and its export. */
function adminFilters(query: Record<string, string | undefined>) {
  return {
    ...timeRange(query),
    resource_type: query['resource_type'],
    resource_id: query['resource_id'],
    actor_id: query['actor_id'],
    action: query['action'],
  }
}

/**
 * The append-only audit logs (docs/audit.md#reading-the-logs) and the login audit; there are no write routes, so
 * other methods are 405.
 */
export const auditRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/audit/queries',
    summary: 'Query audit log, newest first',
    tag: TAG,
    status: 200,
    response: queryAuditPageAnswer,
    query: queryAuditQuery,
    async handler({ c, deps, query }) {
      return c.json(
        await deps.store.audit.queries.list({ ...queryFilters(query), ...timeAndPage(query) }),
      )
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/audit/queries/timeline',
    summary: 'Statements per hour and status (success, error, denied); default the last 24 hours',
    tag: TAG,
    status: 200,
    response: queryAuditTimelineAnswer,
    query: queryAuditTimelineQuery,
    async handler({ c, deps, query }) {
      return c.json(
        await deps.store.audit.queries.timeline({
          from: query.from,
          to: query.to,
          user_id: query.user_id,
          datasource_id: query.datasource_id,
        }),
      )
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/audit/admin',
    summary: 'Admin audit log, newest first',
    tag: TAG,
    status: 200,
    response: adminAuditPageAnswer,
    query: adminAuditQuery,
    async handler({ c, deps, query }) {
      return c.json(
        await deps.store.audit.admin.list({ ...adminFilters(query), ...timeAndPage(query) }),
      )
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/audit/queries/export',
    summary: 'Stream the query audit as NDJSON or CSV, oldest first, with hash-chain links',
    tag: TAG,
    status: 200,
    media: queryAuditExportMedia,
    query: queryAuditExportQuery,
    handler: ({ c, deps, query }) =>
      exportResponse(
        c,
        deps.store.audit.queries.export(queryFilters(query)),
        query.format,
        'query',
      ),
  }),
  defineRoute({
    method: 'GET',
    path: '/audit/admin/export',
    summary: 'Stream the admin audit as NDJSON or CSV, oldest first, with hash-chain links',
    tag: TAG,
    status: 200,
    media: adminAuditExportMedia,
    query: adminAuditExportQuery,
    handler: ({ c, deps, query }) =>
      exportResponse(c, deps.store.audit.admin.export(adminFilters(query)), query.format, 'admin'),
  }),
  defineRoute({
    method: 'GET',
    path: '/audit/verify',
    summary: 'Check the hash chains of both audit logs; reports the first broken link',
    tag: TAG,
    status: 200,
    response: auditVerificationAnswer,
    async handler({ c, deps }) {
      return c.json(await deps.store.audit.verify())
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/audit/logins',
    summary:
      'Login audit: failed and throttled logins of both planes, cleared throttles; newest first',
    tag: TAG,
    status: 200,
    response: loginAuditPageAnswer,
    query: loginAuditQuery,
    async handler({ c, deps, query }) {
      return c.json(
        await deps.store.logins.list({
          ...timeAndPage(query),
          plane: query.plane,
          outcome: query.outcome,
          username: query.username,
          client_address: query.client_address,
        }),
      )
    },
  }),
]
