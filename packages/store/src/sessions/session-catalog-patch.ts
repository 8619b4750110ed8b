import type { Catalog, CatalogTable } from '@palisade/core'
import { descendantsOf, readDescendants } from '../catalog/catalog-descendants.js'
import type { EditedRelation } from '../kernel/catalog-edit.js'
import type { Db } from '../kernel/db.js'
import { readSessionCatalog } from './session-catalog.js'

/**
 * The session catalog after changes that wrote only `relations`, made from the one kept before
 * them: those tables are read again and put in their place, and every other table object is
 * kept, so what sessions derive per table object (index entries, view expansions, digests) is
 * kept with it and the first login after a sync or a tag does no work per exposed table.
 * Undefined when the change reached further (an exposed schema or its alias, or which tables
 * inherit from which): then the catalog is read whole.
 */
export async function patchSessionCatalog(
  db: Db,
  datasourceId: string,
  base: Catalog,
  relations: readonly EditedRelation[],
): Promise<Catalog | undefined> {
  const [fresh, descendants] = await Promise.all([
    readSessionCatalog(db, datasourceId, relations),
    readDescendants(db, datasourceId),
  ])
  const sameSchemas =
    fresh.schemas.length === base.schemas.length &&
    fresh.schemas.every(
      (s, i) => s.name === base.schemas[i]?.name && s.alias === base.schemas[i]?.alias,
    )
  if (!sameSchemas) return undefined
  const touched = new Map<string, Set<string>>()
  for (const r of relations) {
    const names = touched.get(r.schema)
    if (names) names.add(r.table)
    else touched.set(r.schema, new Set([r.table]))
  }
  const schemas = base.schemas.map((schema, i) => {
    const names = touched.get(schema.name)
    if (!names) return schema
    const read = new Map((fresh.schemas[i]?.tables ?? []).map((t) => [t.name, t]))
    const tables: CatalogTable[] = []
    for (const table of schema.tables) {
      if (!names.has(table.name)) tables.push(table)
      else {
        const now = read.get(table.name)
        if (now) tables.push(now)
        read.delete(table.name)
      }
    }
    // Newly exposed tables go where the catalog's name order puts them.
    for (const table of read.values()) tables.splice(insertionPoint(tables, table.name), 0, table)
    return { ...schema, tables }
  })
  // A kept table's descendants come from other tables' ancestors, which the change may have moved.
  for (const schema of schemas) {
    for (const table of schema.tables) {
      const had = table.descendants ?? []
      const now = descendantsOf(descendants, schema.name, table.name)
      if (had.length === 0 && now.length === 0) continue
      if (JSON.stringify(had) !== JSON.stringify(now)) return undefined
    }
  }
  return { ...base, schemas }
}

/** Where `name` goes among tables sorted by name. */
function insertionPoint(tables: readonly CatalogTable[], name: string): number {
  let low = 0
  let high = tables.length
  while (low < high) {
    const middle = (low + high) >> 1
    if ((tables[middle]?.name ?? '') < name) low = middle + 1
    else high = middle
  }
  return low
}
