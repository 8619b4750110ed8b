import { describe, expect, it } from 'vitest'
import { planCatalogSync, type UpstreamCatalogSnapshot } from '../src/catalog/catalog-sync.js'
import type { CatalogView } from '../src/catalog/catalog-view.js'

const column = (name: string, position: number, selected = true) => ({
  id: `col-${name}`,
  column_name: name,
  ordinal_position: position,
  data_type: 'integer',
  is_nullable: true,
  column_default: null,
  is_selected: selected,
})

const table = (name: string, selected: boolean, columns: ReturnType<typeof column>[]) => ({
  id: `table-${name}`,
  table_name: name,
  table_type: 'TABLE',
  is_selected: selected,
  columns,
})

/** public: orders (exposed, `secret` unselected), drafts (unselected); old: one table. */
const VIEW: CatalogView = {
  datasource_id: 'ds',
  schemas: [
    {
      id: 's1',
      schema_name: 'public',
      schema_alias: null,
      is_selected: true,
      tables: [
        table('orders', true, [column('id', 1), column('total', 2), column('secret', 3, false)]),
        table('drafts', false, [column('id', 1)]),
      ],
    },
    {
      id: 's2',
      schema_name: 'old',
      schema_alias: null,
      is_selected: false,
      tables: [table('legacy', false, [])],
    },
  ],
}

const live = (name: string, position: number, dataType = 'integer') => ({
  schema_name: 'public',
  table_name: 'orders',
  column_name: name,
  ordinal_position: position,
  data_type: dataType,
  is_nullable: true,
  column_default: null,
})

function snapshot(overrides: Partial<UpstreamCatalogSnapshot> = {}): UpstreamCatalogSnapshot {
  return {
    schemas: ['public', 'old'],
    tables: [
      { schema_name: 'public', table_name: 'orders', table_type: 'TABLE' },
      { schema_name: 'public', table_name: 'drafts', table_type: 'TABLE' },
      { schema_name: 'old', table_name: 'legacy', table_type: 'TABLE' },
    ],
    column_tables: [{ schema_name: 'public', table_name: 'orders' }],
    columns: [live('id', 1), live('total', 2), live('secret', 3)],
    ...overrides,
  }
}

describe('catalog sync planning', () => {
  it('reports nothing and writes nothing when the upstream matches', () => {
    const plan = planCatalogSync(VIEW, snapshot())
    expect(plan.upserts).toEqual([])
    expect(plan.deletes).toEqual([])
    expect(plan.report.has_breaking_changes).toBe(false)
    expect(
      Object.values(plan.report)
        .flat()
        .filter((x) => x !== false),
    ).toEqual([])
  })

  it('adds, updates and removes columns of exposed tables only', () => {
    const plan = planCatalogSync(
      VIEW,
      snapshot({
        columns: [live('id', 1, 'bigint'), live('secret', 3), live('added', 4)],
        tables: [
          ...snapshot().tables,
          { schema_name: 'public', table_name: 'fresh', table_type: 'VIEW' },
        ],
        schemas: ['public', 'old', 'new'],
      }),
    )
    expect(plan.report).toEqual({
      added_schemas: ['new'],
      removed_schemas: [],
      added_tables: ['public.fresh'],
      removed_tables: [],
      added_columns: ['public.orders.added'],
      removed_columns: ['public.orders.total'],
      changed_columns: ['public.orders.id'],
      has_breaking_changes: true,
    })
    expect(plan.deletes).toEqual(['col-total'])
    expect(plan.upserts.map((u) => u.column.column_name)).toEqual(['id', 'added'])
  })

  it('does not count a removed unselected column as breaking', () => {
    const plan = planCatalogSync(VIEW, snapshot({ columns: [live('id', 1), live('total', 2)] }))
    expect(plan.report.removed_columns).toEqual(['public.orders.secret'])
    expect(plan.report.has_breaking_changes).toBe(false)
  })

  it('reports removed schemas and tables as breaking and leaves unread tables alone', () => {
    const plan = planCatalogSync(
      VIEW,
      snapshot({
        schemas: ['public'],
        tables: [{ schema_name: 'public', table_name: 'orders', table_type: 'TABLE' }],
        column_tables: [],
        columns: [],
      }),
    )
    expect(plan.report).toMatchObject({
      removed_schemas: ['old'],
      removed_tables: ['public.drafts'],
      removed_columns: [],
      has_breaking_changes: true,
    })
    expect(plan.deletes).toEqual([])
  })

  it("updates a table's primary key when it changed upstream, and only then", () => {
    const keyed = (primary_key: string[] | null) =>
      snapshot({
        tables: [
          {
            schema_name: 'public',
            table_name: 'orders',
            table_type: 'TABLE',
            view_definition: null,
            primary_key,
          },
          { schema_name: 'public', table_name: 'drafts', table_type: 'TABLE' },
          { schema_name: 'old', table_name: 'legacy', table_type: 'TABLE' },
        ],
      })
    const added = planCatalogSync(VIEW, keyed(['id']))
    expect(added.relationUpdates).toEqual([
      expect.objectContaining({ tableId: 'table-orders', primaryKey: ['id'] }),
    ])
    const stored: CatalogView = JSON.parse(JSON.stringify(VIEW))
    const orders = stored.schemas[0]?.tables[0]
    if (orders) orders.primary_key = ['id']
    expect(planCatalogSync(stored, keyed(['id'])).relationUpdates).toEqual([])
  })
})
