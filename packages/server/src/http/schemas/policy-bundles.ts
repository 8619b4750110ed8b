import * as v from 'valibot'
import { jsonObject, optionalBoolean } from './common.js'

/** Query of `GET /policy-bundles`: which datasources (all when none) and the text format. */
export const exportBundleQuery = v.object({
  datasource: v.optional(v.union([v.string(), v.array(v.string())])),
  format: v.optional(v.picklist(['json', 'yaml'], 'expected json or yaml')),
  versions: v.optional(v.picklist(['true', 'false'], 'expected true or false')),
})

/**
 * Body of `POST /policy-bundles`: `{bundle, dry_run}`, or the bundle itself (as exported, with
 * its `version`), the dry run then also as a query parameter.
 */
export const applyBundleBody = v.object({
  bundle: v.optional(jsonObject),
  dry_run: optionalBoolean,
})

/** Query of `POST /policy-bundles`. */
export const applyBundleQuery = v.object({
  dry_run: v.optional(v.picklist(['true', 'false'], 'expected true or false')),
})
