import { applyBundle } from '../../policy-as-code/bundle-apply.js'
import { exportBundle } from '../../policy-as-code/bundle-export.js'
import { bundleText } from '../../policy-as-code/bundle-text.js'
import { bundlePlanAnswer, policyBundleAnswer } from '../answers/policy-bundle-answers.js'
import { ApiError } from '../api-error.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { applyBundleBody, applyBundleQuery, exportBundleQuery } from '../schemas/policy-bundles.js'

/** Policy-as-code (docs/policy-as-code.md). */
export const policyBundleRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/policy-bundles',
    summary: 'Export the access model (all or some datasources) as a YAML or JSON bundle',
    tag: 'policy-bundles',
    status: 200,
    media: {
      'application/yaml': { schema: policyBundleAnswer },
      'application/json': { schema: policyBundleAnswer },
    },
    query: exportBundleQuery,
    async handler({ c, deps, query }) {
      const names = c.req.queries('datasource')
      let bundle: Awaited<ReturnType<typeof exportBundle>>
      try {
        bundle = await exportBundle(deps.store, {
          ...(names ? { datasources: names } : {}),
          versions: query.versions === 'true',
        })
      } catch (error) {
        if (error instanceof Error && /not found$/.test(error.message)) {
          throw new ApiError(404, 'not_found', error.message)
        }
        throw error
      }
      const format = query.format ?? 'yaml'
      return c.body(bundleText(bundle, format), 200, {
        'Content-Type': format === 'json' ? 'application/json' : 'application/yaml; charset=utf-8',
      })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/policy-bundles',
    summary: 'Apply a bundle in one transaction, or with dry_run only plan it',
    tag: 'policy-bundles',
    status: 200,
    response: bundlePlanAnswer,
    query: applyBundleQuery,
    body: applyBundleBody,
    async handler({ c, deps, body, query, actorId }) {
      const raw = body as Record<string, unknown>
      const bundle = body.bundle ?? (raw['version'] !== undefined ? raw : undefined)
      const dryRun = body.dry_run ?? query.dry_run === 'true'
      return c.json(await applyBundle(deps.store, bundle, actorId, { dryRun }))
    },
  }),
]
