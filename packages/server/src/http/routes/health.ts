import type { ReadinessReport } from '../../health/readiness.js'
import { defineRoute, type RouteSpec } from '../route-table.js'

/**
 * `GET /health` and `GET /ready` (docs/operations.md#probes). Health is liveness: the process and
 * its event loop answer, whatever the store does, so an orchestrator never restarts instances
 * for a store outage. Ready is readiness: 200 only while the store answers and the change feed is
 * live, else 503 with the reasons; both carry each used datasource's upstream state.
 */
export const healthRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/health',
    summary: 'Liveness: the process answers (200 even while the store is down)',
    tag: 'health',
    auth: 'none',
    status: 200,
    handler: ({ c, deps }) => c.json({ status: 'ok', version: deps.version }),
  }),
  defineRoute({
    method: 'GET',
    path: '/ready',
    summary: 'Readiness: the store answers and the change feed is live (503 with the reasons)',
    tag: 'health',
    auth: 'none',
    status: 200,
    async handler({ c, deps }) {
      const report = await deps.readiness.check()
      return c.json(readinessBody(report, deps.version), report.ready ? 200 : 503)
    },
  }),
]

/** The JSON of `/ready`: the same shape on 200 and 503, names of datasources and states only. */
function readinessBody(report: ReadinessReport, version: string) {
  return {
    status: report.ready ? 'ready' : 'not_ready',
    version,
    reasons: report.reasons,
    store: report.store,
    change_feed: report.changeFeed,
    datasources: report.upstreams.map((u) => ({ name: u.datasource, upstream: u.state })),
  }
}
