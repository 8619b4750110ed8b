import type { CatalogSchema, InheritanceChild, RelationName } from '@palisade/core'
import { and, asc, eq, isNotNull } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { catalogSchemas, catalogTables } from '../tables.js'
import type { CatalogView } from './catalog-view.js'

type Descendants = ReadonlyMap<string, InheritanceChild[]>

/**
 * Every stored table below each table, exposed or not, with its own ancestors: a scan of the
 * parent reads their rows, so sessions apply their policies there (docs/policies.md).
 */
export function descendantsIn(view: CatalogView): Descendants {
  return group(
    view.schemas.flatMap((s) =>
      s.tables.map((t) => ({ schema: s.schema_name, table: t.table_name, ancestors: t.ancestors })),
    ),
  )
}

/** The same as `descendantsIn`, read from the store for one datasource. */
export async function readDescendants(db: Db, datasourceId: string): Promise<Descendants> {
  const rows = await db
    .select({
      schema: catalogSchemas.schemaName,
      table: catalogTables.tableName,
      ancestors: catalogTables.ancestors,
    })
    .from(catalogTables)
    .innerJoin(catalogSchemas, eq(catalogSchemas.id, catalogTables.schemaId))
    .where(and(eq(catalogTables.datasourceId, datasourceId), isNotNull(catalogTables.ancestors)))
    // The order `descendantsIn` reads the catalog view in, so both give equal catalogs.
    .orderBy(asc(catalogSchemas.schemaName), asc(catalogTables.tableName))
  return group(rows)
}

/** The schemas with each table's descendants added. */
export function withDescendants(
  schemas: readonly CatalogSchema[],
  descendants: Descendants,
): CatalogSchema[] {
  return schemas.map((s) => ({
    ...s,
    tables: s.tables.map((t) => {
      const children = descendants.get(descendantKey(s.name, t.name))
      return children && children.length > 0 ? { ...t, descendants: children } : t
    }),
  }))
}

/** The descendants `withDescendants` gives one table (none: an empty list). */
export function descendantsOf(
  descendants: Descendants,
  schema: string,
  table: string,
): readonly InheritanceChild[] {
  return descendants.get(descendantKey(schema, table)) ?? []
}

function group(
  tables: readonly { schema: string; table: string; ancestors?: RelationName[] | null }[],
): Descendants {
  const out = new Map<string, InheritanceChild[]>()
  for (const { schema, table, ancestors } of tables) {
    for (const ancestor of ancestors ?? []) {
      const key = descendantKey(ancestor.schema, ancestor.table)
      const child = { schema, table, ancestors: ancestors ?? [] }
      out.set(key, [...(out.get(key) ?? []), child])
    }
  }
  return out
}

const descendantKey = (schema: string, table: string): string => `${schema}\u0000${table}`
