import type { Catalog, CatalogColumn } from '../catalog.types.js'
import type { SessionInput } from '../session-context.types.js'
import type { EffectivePolicy, PolicyTarget, PolicyType } from './policy.types.js'
import { matchesAny } from './target-pattern.js'

/**
 * Tag-targeted policies (docs/policies.md, "Tags"): a target's `tags` match a catalog object
 * carrying that tag or any tag below it (`pii` matches `pii.email`). Column policies match
 * column tags; row filters and table denies match table tags. Before anything else reads them,
 * tag targets are expanded into plain name targets over the session's catalog, so every later
 * step (visibility, scan wrapping, masks, lineage) uses the one name matcher.
 */

/** A tag: dot-separated lowercase words (`pii`, `pii.email`, `finance.salary`). */
export const TAG_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/
export const MAX_TAG_LENGTH = 100

/** Policy types whose targets name columns. */
export const COLUMN_POLICY_TYPES: ReadonlySet<PolicyType> = new Set([
  'column_mask',
  'column_allow',
  'column_deny',
  'projection',
])

/** Whether `tag` is `pattern` or lies below it in the hierarchy. */
export function tagMatches(pattern: string, tag: string): boolean {
  return tag === pattern || tag.startsWith(`${pattern}.`)
}

/** Whether any of `tags` falls under any of `patterns`. */
export function tagsMatch(
  patterns: readonly string[],
  tags: readonly string[] | undefined,
): boolean {
  if (!tags) return false
  return tags.some((tag) => patterns.some((p) => tagMatches(p, tag)))
}

/**
 * A target as stored: a tag target leaves out what it does not narrow, which then matches
 * everything (`*`); a name target is unchanged.
 */
export function withTargetDefaults(type: PolicyType, target: PolicyTarget): PolicyTarget {
  if (!target.tags || target.tags.length === 0) return target
  const all = ['*']
  return {
    schemas: target.schemas?.length ? target.schemas : all,
    tables: target.tables?.length ? target.tables : all,
    columns: COLUMN_POLICY_TYPES.has(type) ? (target.columns?.length ? target.columns : all) : null,
    tags: target.tags,
  }
}

/** Whether a tag target covers one column (name patterns and column tags). */
export function tagTargetCoversColumn(
  target: PolicyTarget,
  schema: string,
  table: string,
  column: { name: string; tags?: readonly string[] },
): boolean {
  return (
    !!target.tags &&
    matchesAny(target.schemas, schema) &&
    matchesAny(target.tables, table) &&
    matchesAny(target.columns ?? ['*'], column.name) &&
    tagsMatch(target.tags, column.tags)
  )
}

/** The name targets one tag target stands for in `catalog` (none when nothing is tagged). */
function expandTarget(type: PolicyType, target: PolicyTarget, catalog: Catalog): PolicyTarget[] {
  const tags = target.tags as readonly string[]
  const out: PolicyTarget[] = []
  for (const schema of catalog.schemas) {
    if (!matchesAny(target.schemas, schema.name)) continue
    for (const table of schema.tables) {
      if (!matchesAny(target.tables, table.name)) continue
      const where = { schemas: [schema.name], tables: [table.name] }
      if (COLUMN_POLICY_TYPES.has(type)) {
        const columns = table.columns
          .filter((c: CatalogColumn) => tagTargetCoversColumn(target, schema.name, table.name, c))
          .map((c) => c.name)
        if (columns.length > 0) out.push({ ...where, columns })
      } else if (tagsMatch(tags, table.tags)) {
        out.push({ ...where, columns: null })
      }
    }
  }
  return out
}

/** Expansions per catalog object: every session compiled from one catalog shares them. */
const expansions = new WeakMap<Catalog, Map<string, PolicyTarget[]>>()

/** `expandTarget`, computed once per catalog and target (a wide catalog makes it costly). */
function expandedOnce(type: PolicyType, target: PolicyTarget, catalog: Catalog): PolicyTarget[] {
  let known = expansions.get(catalog)
  if (!known) {
    known = new Map()
    expansions.set(catalog, known)
  }
  const key = JSON.stringify([type, target.schemas, target.tables, target.columns, target.tags])
  let out = known.get(key)
  if (!out) {
    out = expandTarget(type, target, catalog)
    if (known.size >= 1024) known.clear()
    known.set(key, out)
  }
  return out
}

function hasTagTarget(policy: EffectivePolicy): boolean {
  return policy.targets.some((t) => t.tags && t.tags.length > 0)
}

/** The input with every tag target replaced by the name targets it covers now. */
export function expandTagTargets(input: SessionInput): SessionInput {
  if (!input.policies.some(hasTagTarget)) return input
  return {
    ...input,
    policies: input.policies.map((policy) =>
      hasTagTarget(policy)
        ? {
            ...policy,
            targets: policy.targets.flatMap((t) =>
              t.tags && t.tags.length > 0 ? expandedOnce(policy.type, t, input.catalog) : [t],
            ),
          }
        : policy,
    ),
  }
}
