// What a catalog change records in the admin audit, and whether exposure or definitions changed.
import { sortedUnique } from '../kernel/context.js'
import type { Exposure } from './catalog-exposure.js'

/** Whether an exposed relation's kind, definition, reads, ancestors or usable key changed. */
export function definitionsChanged(before: Exposure, after: Exposure): boolean {
  if (before.definitions.size !== after.definitions.size) return true
  for (const [key, value] of after.definitions) {
    if (before.definitions.get(key) !== value) return true
  }
  return false
}

/**
 * The `changes` of a catalog audit entry (docs/admin-api.md#catalog-discovery): each `schema.table` whose exposure
 * changed maps to its exposed columns, or null; alias changes go under `schema_aliases`.
 */
export function catalogChanges(
  before: Exposure,
  after: Exposure,
  source: 'save_catalog' | 'sync_catalog',
): {
  field: 'catalog'
  source: string
  before: Record<string, unknown>
  after: Record<string, unknown>
} {
  const b: Record<string, unknown> = {}
  const a: Record<string, unknown> = {}
  for (const key of sortedUnique([...before.tables.keys(), ...after.tables.keys()])) {
    const x = before.tables.get(key) ?? null
    const y = after.tables.get(key) ?? null
    if (JSON.stringify(x) !== JSON.stringify(y)) {
      b[key] = x
      a[key] = y
    }
  }
  const aliasAfter: Record<string, unknown> = {}
  const aliasBefore: Record<string, unknown> = {}
  for (const key of sortedUnique([...before.aliases.keys(), ...after.aliases.keys()])) {
    const x = before.aliases.get(key) ?? null
    const y = after.aliases.get(key) ?? null
    if (x !== y) {
      aliasBefore[key] = x
      aliasAfter[key] = y
    }
  }
  if (Object.keys(aliasAfter).length > 0) {
    b['schema_aliases'] = aliasBefore
    a['schema_aliases'] = aliasAfter
  }
  return { field: 'catalog', source, before: b, after: a }
}
