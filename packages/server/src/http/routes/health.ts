import * as v from 'valibot'
import type { ReadinessReport } from '../../health/readiness.js'
import { defineRoute, type RouteSpec } from '../route-table.js'

/**
 * `GET /health` and `GET /ready` (docs/operations.md#probes). Health is liveness: the process and
 * its event loop answer, whatever the store does, so an orchestrator never restarts instances
 * for a store outage. Ready is readiness: 200 only while the store answers and the change feed is
 * live, else 503 with the reasons; both carry each used datasource's upstream state.
 */
/** The JSON of `/health`. */
const healthAnswer = v.strictObject({ status: v.literal('ok'), version: v.string() })

/** The JSON of `/ready`: the same shape on 200 and 503, names of datasources and states only. */
const readyAnswer = v.strictObject({
  status: v.picklist(['ready', 'not_ready']),
  version: v.string(),
  reasons: v.array(v.string()),
  store: v.picklist(['ok', 'unreachable']),
  change_feed: v.picklist(['live', 'down']),
  datasources: v.array(
    v.object({ name: v.string(), upstream: v.picklist(['reachable', 'unreachable']) }),
  ),
})

export const healthRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/health',
    summary: 'Liveness: the process answers (200 even while the store is down)',
    tag: 'health',
    auth: 'none',
    status: 200,
    response: healthAnswer,
    handler: ({ c, deps }) =>
      c.json({ status: 'ok', version: deps.version } satisfies v.InferOutput<typeof healthAnswer>),
  }),
  defineRoute({
    method: 'GET',
    path: '/ready',
    summary: 'Readiness: the store answers and the change feed is live (503 with the reasons)',
    tag: 'health',
    auth: 'none',
    status: 200,
    response: readyAnswer,
    async handler({ c, deps }) {
      const report = await deps.readiness.check()
      return c.json(readinessBody(report, deps.version), report.ready ? 200 : 503)
    },
  }),
]

function readinessBody(
  report: ReadinessReport,
  version: string,
): v.InferOutput<typeof readyAnswer> {
  return {
    status: report.ready ? 'ready' : 'not_ready',
    version,
    reasons: [...report.reasons],
    store: report.store,
    change_feed: report.changeFeed,
    datasources: report.upstreams.map((u) => ({ name: u.datasource, upstream: u.state })),
  }
}
