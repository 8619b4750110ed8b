import type { ObjectTags } from '@palisade/store'
import { annotateExpansion } from '../catalog-expansion.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'

const TAG = 'catalog'

type View = Awaited<ReturnType<typeof annotateExpansion>>

/** The view with `tags` on tagged tables and columns (untagged ones keep their shape). */
function withTags(view: View, tagged: ObjectTags[]): View {
  if (tagged.length === 0) return view
  const tags = new Map(
    tagged.map((o) => [
      `${o.schema_name}\u0000${o.table_name}\u0000${o.column_name ?? ''}`,
      o.tags,
    ]),
  )
  const of = (...names: string[]) => tags.get(names.join('\u0000'))
  return {
    ...view,
    schemas: view.schemas.map((s) => ({
      ...s,
      tables: s.tables.map((t) => {
        const own = of(s.schema_name, t.table_name, '')
        return {
          ...t,
          ...(own ? { tags: own } : {}),
          columns: t.columns.map((col) => {
            const columnTags = of(s.schema_name, t.table_name, col.column_name)
            return columnTags ? { ...col, tags: columnTags } : col
          }),
        }
      }),
    })),
  }
}

/** The stored catalog view (docs/admin-api.md#catalog-discovery); discovery jobs live in `discovery.ts` (7.1). */
export const catalogRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/datasources/{id}/catalog',
    summary: 'The stored catalog, unfiltered, without an upstream call',
    tag: TAG,
    status: 200,
    params: idParams,
    handler: async ({ c, deps, params }) =>
      c.json(
        withTags(
          await annotateExpansion(await deps.store.catalog.get(params.id)),
          await deps.store.catalogTags.list(params.id),
        ),
      ),
  }),
]
