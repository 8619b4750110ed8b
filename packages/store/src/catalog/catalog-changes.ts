// What a catalog change records in the admin audit, and whether exposure or definitions changed.
import type { Catalog } from '@palisade/core'
import { sortedUnique } from '../kernel/context.js'

/** The exposed relations' kinds and definitions, as one comparable string. */
export function definitionsOf(catalog: Catalog): string {
  return JSON.stringify(
    catalog.schemas.flatMap((s) =>
      s.tables.map((t) => [
        s.name,
        t.name,
        t.kind,
        t.definition ?? null,
        t.reads ?? null,
        t.ancestors ?? null,
        t.primaryKey ?? null,
      ]),
    ),
  )
}

function exposureMap(catalog: Catalog): {
  tables: Map<string, string[]>
  aliases: Map<string, string | null>
} {
  const tables = new Map<string, string[]>()
  const aliases = new Map<string, string | null>()
  for (const s of catalog.schemas) {
    aliases.set(s.name, s.alias ?? null)
    for (const t of s.tables)
      tables.set(
        `${s.name}.${t.name}`,
        t.columns.map((c) => c.name),
      )
  }
  return { tables, aliases }
}

/**
 * The `changes` of a catalog audit entry (docs/admin-api.md#catalog-discovery): each `schema.table` whose exposure
 * changed maps to its exposed columns, or null; alias changes go under `schema_aliases`.
 */
export function catalogChanges(
  beforeCatalog: Catalog,
  afterCatalog: Catalog,
  source: 'save_catalog' | 'sync_catalog',
): {
  field: 'catalog'
  source: string
  before: Record<string, unknown>
  after: Record<string, unknown>
} {
  const before = exposureMap(beforeCatalog)
  const after = exposureMap(afterCatalog)
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
