import * as v from 'valibot'
import { invalidParameter } from '../api-error.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { clearThrottleQuery } from '../schemas/audit.js'

const TAG = 'auth'

/** One throttled key, as `GET /login-throttles` lists it. */
const throttleAnswer = v.strictObject({
  scope: v.picklist(['address', 'account']),
  key: v.string(),
  failures: v.number(),
  window_seconds: v.number(),
  throttled_until: v.pipe(v.string(), v.isoTimestamp()),
})

/**
 * The failed-login throttles of this instance (docs/operations.md, "Failed logins"): list the
 * keys that are throttled now, and clear one so its next attempt is checked at once.
 */
export const loginThrottleRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/login-throttles',
    summary: 'Source addresses and account names this instance throttles now (not paged)',
    tag: TAG,
    status: 200,
    response: v.array(throttleAnswer),
    handler({ c, deps }) {
      const { config } = deps.logins.throttle
      return c.json(
        deps.logins.throttle.list().map(
          (entry): v.InferOutput<typeof throttleAnswer> => ({
            scope: entry.scope,
            key: entry.key,
            failures: entry.failures,
            window_seconds: Math.round(config.windowMs / 1000),
            throttled_until: entry.throttledUntil.toISOString(),
          }),
        ),
      )
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/login-throttles',
    summary: 'Forget the failed logins of an address and/or an account name (login-audited)',
    tag: TAG,
    status: 204,
    query: clearThrottleQuery,
    handler({ c, deps, query, actorId }) {
      if (query.address === undefined && query.username === undefined) {
        throw invalidParameter('address', 'or username is required')
      }
      const cleared = [
        ['address', query.address],
        ['account', query.username],
      ] as const
      for (const [scope, key] of cleared) {
        if (key !== undefined) deps.logins.cleared(scope, key, actorId)
      }
      return c.body(null, 204)
    },
  }),
]
