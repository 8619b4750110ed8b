import type { ObjectTags } from '@palisade/store'
import * as v from 'valibot'
import { catalogPageAnswer } from '../answers/catalog-answers.js'
import { annotateExpansion } from '../catalog-expansion.js'
import { pageQuery, toPageInput } from '../pagination.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams, search } from '../schemas/common.js'

const TAG = 'catalog'

type View = Awaited<ReturnType<typeof annotateExpansion>>

/** Query of `GET /datasources/{id}/catalog`: paging, a schema (exact) and a table-name search. */
const catalogQuery = v.object({ ...pageQuery, schema: v.optional(v.string()), search })

/** The view with `tags` on tagged tables and columns (untagged ones keep their shape). */
function withTags<T extends View>(view: T, tagged: ObjectTags[]): T {
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
    summary:
      'The stored catalog, unfiltered, without an upstream call: one page of tables under their ' +
      'schemas (page, page_size default 100, cap 1000; schema: exact upstream name; search: ' +
      'table name), with total, page and page_size',
    tag: TAG,
    status: 200,
    response: catalogPageAnswer,
    params: idParams,
    query: catalogQuery,
    handler: async ({ c, deps, params, query }) => {
      const page = await deps.store.catalog.page(params.id, {
        ...toPageInput(query),
        schema: query.schema,
        search: query.search,
      })
      const annotated = await annotateExpansion(page, () => deps.store.catalog.exposed(params.id))
      return c.json(withTags(annotated, await deps.store.catalogTags.list(params.id)))
    },
  }),
]
