import type { Catalog, CatalogTable, InheritanceChild } from '../catalog.types.js'
import type { ExposedTable } from './scan-plan.js'

type Descendants = ReadonlyMap<string, readonly InheritanceChild[]>

const byCatalog = new WeakMap<Catalog, Descendants>()

const key = (schema: string, table: string): string => `${schema}\u0000${table}`

/**
 * Every table below each table of a catalog: the ones its `descendants` list (exposed or not)
 * and the exposed ones whose `ancestors` name it. Built once per catalog object.
 */
function descendantsOf(catalog: Catalog): Descendants {
  let map = byCatalog.get(catalog)
  if (map) return map
  const out = new Map<string, Map<string, InheritanceChild>>()
  const add = (parent: string, child: InheritanceChild): void => {
    const children = out.get(parent) ?? new Map<string, InheritanceChild>()
    out.set(parent, children)
    const k = key(child.schema, child.table)
    if (!children.has(k)) children.set(k, child)
  }
  for (const schema of catalog.schemas) {
    for (const table of schema.tables) {
      for (const child of table.descendants ?? []) add(key(schema.name, table.name), child)
      const ancestors = table.ancestors ?? []
      for (const ancestor of ancestors)
        add(key(ancestor.schema, ancestor.table), {
          schema: schema.name,
          table: table.name,
          ancestors,
        })
    }
  }
  map = new Map([...out].map(([k, children]) => [k, [...children.values()]]))
  byCatalog.set(catalog, map)
  return map
}

/**
 * The descendants of one exposed table as tables to plan: an exposed one as the catalog has
 * it, an unexposed one with the parent's columns (a child has every column of its parents).
 */
export function descendantTables(
  catalog: Catalog,
  parent: ExposedTable,
  findTable: (schema: string, table: string) => CatalogTable | undefined,
): ExposedTable[] {
  const children = descendantsOf(catalog).get(key(parent.schema, parent.name)) ?? []
  return children.map((child) => {
    const exposed = findTable(child.schema, child.table)
    const table: CatalogTable = exposed
      ? { ...exposed, ancestors: exposed.ancestors ?? child.ancestors }
      : { name: child.table, columns: parent.table.columns, ancestors: child.ancestors }
    return { schema: child.schema, visibleSchema: child.schema, table, name: child.table }
  })
}
