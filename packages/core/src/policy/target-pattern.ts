import type { RelationName } from '../catalog.types.js'
import type { PolicyTarget } from './policy.types.js'

/**
 * Spec 1.1 rule 10: a bare `*` matches everything, a pattern ending in `*` is a prefix match,
 * any other pattern is an exact, case-sensitive match. The one matcher used for visibility
 * and for enforcement.
 */
export function matchesPattern(pattern: string, value: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('*')) return value.startsWith(pattern.slice(0, -1))
  return pattern === value
}

export function matchesAny(patterns: readonly string[] | null | undefined, value: string): boolean {
  if (!patterns) return false
  for (const pattern of patterns) if (matchesPattern(pattern, value)) return true
  return false
}

/** Whether a target entry names the table (upstream schema name, table name). */
export function targetMatchesTable(target: PolicyTarget, schema: string, table: string): boolean {
  return matchesAny(target.schemas, schema) && matchesAny(target.tables, table)
}

/** Whether any target entry of a policy names the table. */
export function targetsMatchTable(
  targets: readonly PolicyTarget[],
  schema: string,
  table: string,
): boolean {
  return targets.some((t) => targetMatchesTable(t, schema, table))
}

/**
 * Whether any target entry names the table or one of its ancestors (the tables it inherits
 * from or is a partition of): a parent's policies follow its rows into every child.
 */
export function targetsMatchLineage(
  targets: readonly PolicyTarget[],
  lineage: readonly RelationName[],
  column?: string,
): boolean {
  return targets.some((t) =>
    lineage.some(
      (r) =>
        targetMatchesTable(t, r.schema, r.table) &&
        (column === undefined || matchesAny(t.columns ?? undefined, column)),
    ),
  )
}
