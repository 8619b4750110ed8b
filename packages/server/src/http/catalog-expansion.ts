import { type Catalog, describeViews, loadParser, type ViewDescription } from '@palisade/core'
import { type CatalogView, exposedOf } from '@palisade/store'

type StoredTable = CatalogView['schemas'][number]['tables'][number]

/** A table of the admin catalog view; relations other than tables say how they are read. */
type AnnotatedTable = Omit<
  StoredTable,
  'view_definition' | 'view_reads' | 'ancestors' | 'primary_key'
> & {
  view_definition?: string | null
  expansion?: ViewDescription | null
}

/**
 * The admin catalog view (docs/admin-api.md#catalog-discovery) with, for every view, materialized view and foreign
 * table, its definition and whether Palisade expands it or fails closed, and why.
 */
export async function annotateExpansion<T extends CatalogView>(
  view: T,
  exposed: () => Promise<Catalog> = async () => exposedOf(view),
): Promise<T> {
  // Only relations other than tables are described, against every exposed relation (a view's
  // expansion depends on what it reads, which may be on another page): a page of plain tables
  // reads nothing more.
  let described = new Map<string, ViewDescription>()
  if (view.schemas.some((s) => s.tables.some((t) => t.table_type !== 'TABLE'))) {
    await loadParser()
    described = describeViews(await exposed())
  }
  return {
    ...view,
    schemas: view.schemas.map((schema) => ({
      ...schema,
      tables: schema.tables.map((table): AnnotatedTable => {
        const { view_definition, view_reads: _reads, ancestors, primary_key: _key, ...base } = table
        // Only inheritance children and partitions say whose policies they carry.
        const rest = ancestors && ancestors.length > 0 ? { ...base, ancestors } : base
        if (table.table_type === 'TABLE') return rest
        return {
          ...rest,
          view_definition: view_definition ?? null,
          // Unexposed relations are not read by any session, so nothing is said of them.
          expansion: described.get(`${schema.schema_name}.${table.table_name}`) ?? null,
        }
      }),
    })),
  }
}
