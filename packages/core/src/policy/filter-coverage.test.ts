import { describe, expect, it } from 'vitest'
import type { Catalog, ColumnAnchor, TableRelationship } from '../catalog.types.js'
import { filterCoverage } from './filter-coverage.js'

const table = (name: string, ...columns: string[]) => ({
  name,
  columns: columns.map((c) => ({ name: c, type: 'integer' })),
})

const CATALOG: Catalog = {
  schemas: [
    {
      name: 'public',
      alias: 'app',
      tables: [
        table('orders', 'id', 'tenant_id'),
        table('payments', 'id', 'order_id'),
        table('refunds', 'id', 'payment_id'),
        table('labels', 'id', 'tenant_ref'),
        table('broken', 'id'),
        table('misc', 'id'),
        table('loop_a', 'id', 'b_id'),
        table('loop_b', 'id', 'a_id'),
      ],
    },
    { name: 'other', tables: [table('elsewhere', 'tenant_id')] },
  ],
}

const rel = (id: string, child: string, column: string, parent: string): TableRelationship => ({
  id,
  childSchema: 'public',
  childTable: child,
  childColumn: column,
  parentSchema: 'public',
  parentTable: parent,
  parentColumn: 'id',
})

const RELATIONSHIPS = [
  rel('r1', 'payments', 'order_id', 'orders'),
  rel('r2', 'refunds', 'payment_id', 'payments'),
  rel('r3', 'loop_a', 'b_id', 'loop_b'),
  rel('r4', 'loop_b', 'a_id', 'loop_a'),
]

const anchor = (table: string, extra: Partial<ColumnAnchor>): ColumnAnchor => ({
  schema: 'public',
  table,
  resolvedColumn: 'tenant_id',
  ...extra,
})

const ANCHORS = [
  anchor('payments', { relationshipId: 'r1' }),
  anchor('refunds', { relationshipId: 'r2' }),
  anchor('labels', { actualColumn: 'tenant_ref' }),
  anchor('broken', { actualColumn: 'nope' }),
  anchor('loop_a', { relationshipId: 'r3' }),
  anchor('loop_b', { relationshipId: 'r4' }),
]

async function coverage(filterExpression: string) {
  const tables = await filterCoverage({
    filterExpression,
    targets: [{ schemas: ['public'], tables: ['*'] }],
    catalog: CATALOG,
    relationships: RELATIONSHIPS,
    anchors: ANCHORS,
  })
  return Object.fromEntries(tables.map((t) => [t.table, t]))
}

describe('filterCoverage: a dry run of row-filter column resolution (docs/admin-api.md#relationships-anchors-and-their-checks)', () => {
  it('covers the exposed tables the targets match, under their visible schema', async () => {
    const tables = await coverage('tenant_id = {user.tenant}')
    expect(Object.keys(tables).sort()).toEqual([
      'broken',
      'labels',
      'loop_a',
      'loop_b',
      'misc',
      'orders',
      'payments',
      'refunds',
    ])
    expect(tables['orders']).toMatchObject({ schema: 'public', visibleSchema: 'app' })
  })

  it.each([
    ['orders', { kind: 'on_table' }],
    ['labels', { kind: 'anchor_alias', actualColumn: 'tenant_ref' }],
    ['broken', { kind: 'missing_column_on_alias_target', actualColumn: 'nope' }],
    ['misc', { kind: 'missing_anchor' }],
    ['payments', { kind: 'anchor_walk', relationship: RELATIONSHIPS[0] }],
    ['refunds', { kind: 'anchor_walk', relationship: RELATIONSHIPS[1] }],
  ])('resolves tenant_id on %s', async (name, verdict) => {
    const tables = await coverage('tenant_id = {user.tenant}')
    expect(tables[name]?.columns).toEqual([{ column: 'tenant_id', ...verdict }])
  })

  it('reports why a walk fails beyond its first hop', async () => {
    const tables = await coverage('tenant_id = 1')
    const [verdict] = tables['loop_a']?.columns ?? []
    expect(verdict).toMatchObject({ kind: 'anchor_walk', relationship: RELATIONSHIPS[2] })
    expect(verdict && 'error' in verdict ? verdict.error : '').toContain('more than 3 hops')
  })

  it('lists each column the filter reads once, sorted', async () => {
    const tables = await coverage('tenant_id = 1 AND (id > 0 OR tenant_id IS NULL)')
    expect(tables['orders']?.columns.map((c) => c.column)).toEqual(['id', 'tenant_id'])
  })
})
