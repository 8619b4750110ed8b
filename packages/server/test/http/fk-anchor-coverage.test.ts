import { catalogIds, type SaveSchemaInput } from '@palisade/store'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, setup, type TestContext, unique } from './helpers.js'
import {
  closedPort,
  pgliteDirUpstream,
  postgresAt,
  removeUpstreamDirs,
} from './upstream-fixtures.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(async () => {
  await ctx.close()
  await removeUpstreamDirs()
})

/** A stored schema whose tables have `text` columns, all selected unless listed in `off`. */
function schema(
  name: string,
  tables: Record<string, string[]>,
  options: { alias?: string; off?: string[] } = {},
): SaveSchemaInput {
  return {
    schema_name: name,
    schema_alias: options.alias ?? null,
    is_selected: true,
    tables: Object.entries(tables).map(([table, columns]) => ({
      table_name: table,
      is_selected: !options.off?.includes(table),
      columns: columns.map((column, i) => ({
        column_name: column,
        ordinal_position: i + 1,
        data_type: 'text',
        is_nullable: true,
      })),
    })),
  }
}

async function auditTotal(): Promise<number> {
  return (await ctx.json('GET', '/api/v1/audit/admin')).body.total
}

describe('fk-suggestions', () => {
  const UPSTREAM_TABLES = {
    tenants: ['id', 'name'],
    orders: ['id', 'tenant_id', 'note'],
    payments: ['id', 'order_id', 'amount'],
    codes: ['code', 'label'],
    tagged: ['id', 'code'],
    pairs: ['a', 'b'],
    pair_refs: ['a', 'b'],
  }

  it('suggests single-column foreign keys to a key between exposed tables', async () => {
    const { ds } = await pgliteDirUpstream(ctx)
    await ctx.store.catalog.saveCatalog(ds.id, [schema('public', UPSTREAM_TABLES)], ctx.admin.id)
    const table = (name: string) => catalogIds.table(ds.id, 'public', name)
    const url = `/api/v1/datasources/${ds.id}/fk-suggestions`
    const audits = await auditTotal()
    const { status, body } = await ctx.json('GET', url)
    expect(status).toBe(200)
    expect(body).toEqual([
      {
        child_table_id: table('orders'),
        child_schema_name: 'public',
        child_table_name: 'orders',
        child_column_name: 'tenant_id',
        parent_table_id: table('tenants'),
        parent_schema_name: 'public',
        parent_table_name: 'tenants',
        parent_column_name: 'id',
        constraint_name: 'orders_tenant_id_fkey',
        already_added: false,
      },
      expect.objectContaining({
        child_table_name: 'payments',
        child_column_name: 'order_id',
        parent_table_name: 'orders',
        parent_column_name: 'id',
        already_added: false,
      }),
      expect.objectContaining({
        child_table_name: 'tagged',
        child_column_name: 'code',
        parent_table_name: 'codes',
        parent_column_name: 'code',
        constraint_name: 'tagged_code_fkey',
      }),
    ])
    expect(await auditTotal()).toBe(audits)
    expect((await ctx.json('GET', `/api/v1/datasources/${ds.id}/relationships`)).body).toEqual([])

    const created = await ctx.json('POST', `/api/v1/datasources/${ds.id}/relationships`, {
      body: {
        child_table_id: table('payments'),
        child_column_name: 'order_id',
        parent_table_id: table('orders'),
        parent_column_name: 'id',
      },
    })
    expect(created.status).toBe(201)
    await ctx.store.catalog.saveCatalog(
      ds.id,
      [schema('public', UPSTREAM_TABLES, { off: ['tenants'] })],
      ctx.admin.id,
    )
    const after = await ctx.json('GET', url)
    expect(after.body.map((s: any) => [s.child_table_name, s.already_added])).toEqual([
      ['payments', true],
      ['tagged', false],
    ])
  })

  it('answers 404 for an unknown datasource and 502 when the upstream cannot be read', async () => {
    expect((await ctx.json('GET', `/api/v1/datasources/${MISSING_ID}/fk-suggestions`)).status).toBe(
      404,
    )
    expect((await ctx.json('GET', '/api/v1/datasources/nope/fk-suggestions')).status).toBe(400)
    const ds = await postgresAt(ctx, await closedPort())
    const { status, body } = await ctx.json('GET', `/api/v1/datasources/${ds.id}/fk-suggestions`)
    expect(status).toBe(502)
    expect(body.error.code).toBe('upstream_error')
    expect(body.error.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/)
    expect(ctx.logs).toContainEqual(
      expect.objectContaining({ level: 'warn', datasource_id: ds.id }),
    )
  })
})

describe('anchor-coverage', () => {
  /** One datasource with anchors of every kind, and a row filter on `tenant_id`. */
  async function coveredDatasource(name: string) {
    const ds = await ctx.store.datasources.create(
      { name, ds_type: 'pglite', config: {} },
      ctx.admin.id,
    )
    const tables = {
      tenants: ['id', 'tenant_id'],
      orders: ['id', 'tenant_id'],
      payments: ['id', 'order_id'],
      refunds: ['id', 'payment_id'],
      labels: ['id', 'tenant_ref'],
      broken: ['id', 'x'],
      misc: ['id'],
      notes: ['id', 'misc_id'],
      hidden: ['id'],
    }
    await ctx.store.catalog.saveCatalog(
      ds.id,
      [
        schema('public', tables, { alias: 'app', off: ['hidden'] }),
        schema('other', { elsewhere: ['tenant_id'] }),
      ],
      ctx.admin.id,
    )
    const id = (table: string) => catalogIds.table(ds.id, 'public', table)
    const link = async (child: string, column: string, parent: string) => {
      const rel = await ctx.store.relationships.create(
        ds.id,
        {
          child_table_id: id(child),
          child_column_name: column,
          parent_table_id: id(parent),
          parent_column_name: 'id',
        },
        ctx.admin.id,
      )
      await ctx.store.relationships.createAnchor(
        ds.id,
        { child_table_id: id(child), resolved_column_name: 'tenant_id', relationship_id: rel.id },
        ctx.admin.id,
      )
      return rel.id
    }
    const alias = (table: string, actual: string) =>
      ctx.store.relationships.createAnchor(
        ds.id,
        {
          child_table_id: id(table),
          resolved_column_name: 'tenant_id',
          actual_column_name: actual,
        },
        ctx.admin.id,
      )
    const rels = {
      payments: await link('payments', 'order_id', 'orders'),
      refunds: await link('refunds', 'payment_id', 'payments'),
      notes: await link('notes', 'misc_id', 'misc'),
    }
    await alias('labels', 'tenant_ref')
    await alias('broken', 'nope')
    return { ds, rels }
  }

  async function rowFilter(datasourceIds: string[], filter = 'tenant_id = {user.tenant}') {
    const policy = await ctx.store.policies.create(
      {
        name: unique('cov'),
        policy_type: 'row_filter',
        targets: [{ schemas: ['public'], tables: ['*'] }],
        filter_expression: filter,
      },
      ctx.admin.id,
    )
    for (const id of datasourceIds) {
      await ctx.store.assignments.assign(id, { policy_id: policy.id, scope: 'all' }, ctx.admin.id)
    }
    return policy
  }

  it('dry-runs the filter column over every exposed table the targets match', async () => {
    const { ds, rels } = await coveredDatasource(unique('cov'))
    const policy = await rowFilter([ds.id])
    const audits = await auditTotal()
    const { status, body } = await ctx.json('GET', `/api/v1/policies/${policy.id}/anchor-coverage`)
    expect(status).toBe(200)
    expect(await auditTotal()).toBe(audits)
    expect(body.policy_id).toBe(policy.id)
    expect(body.policy_type).toBe('row_filter')
    const entry = (table: string, verdict: Record<string, unknown>) => ({
      data_source_id: ds.id,
      data_source_name: ds.name,
      schema: 'app',
      schema_upstream: 'public',
      table,
      verdicts: [{ column: 'tenant_id', ...verdict }],
    })
    const walk = (rel: string, child: string, parent: string) => ({
      kind: 'anchor_walk',
      via_relationship_id: rel,
      via_child_column: child,
      via_parent_column: 'id',
      parent_schema: 'public',
      parent_table: parent,
    })
    expect(body.coverage).toEqual([
      entry('broken', { kind: 'missing_column_on_alias_target', actual_column_name: 'nope' }),
      entry('labels', { kind: 'anchor_alias', actual_column_name: 'tenant_ref' }),
      entry('misc', { kind: 'missing_anchor' }),
      entry('notes', { ...walk(rels.notes, 'misc_id', 'misc'), error: expect.any(String) }),
      entry('orders', { kind: 'on_table' }),
      entry('payments', walk(rels.payments, 'order_id', 'orders')),
      entry('refunds', walk(rels.refunds, 'payment_id', 'payments')),
      entry('tenants', { kind: 'on_table' }),
    ])
    expect(body.coverage[3].verdicts[0].error).toContain('no column anchor')
  })

  it('lists every column the filter reads, and every datasource the policy is assigned on', async () => {
    const first = await coveredDatasource(unique('acov'))
    const second = await coveredDatasource(unique('bcov'))
    const policy = await rowFilter([second.ds.id, first.ds.id], 'tenant_id = 1 AND id > 0')
    const { body } = await ctx.json('GET', `/api/v1/policies/${policy.id}/anchor-coverage`)
    expect(body.coverage).toHaveLength(16)
    expect(body.coverage[0].data_source_name).toBe(first.ds.name)
    expect(body.coverage[8].data_source_name).toBe(second.ds.name)
    expect(body.coverage[4].verdicts).toEqual([
      { column: 'id', kind: 'on_table' },
      { column: 'tenant_id', kind: 'on_table' },
    ])
  })

  it('returns no coverage for an unassigned row filter or another policy type', async () => {
    const unassigned = await rowFilter([])
    const res = await ctx.json('GET', `/api/v1/policies/${unassigned.id}/anchor-coverage`)
    expect(res.body).toEqual({ policy_id: unassigned.id, policy_type: 'row_filter', coverage: [] })
    const mask = await ctx.store.policies.create(
      {
        name: unique('mask'),
        policy_type: 'column_mask',
        targets: [{ schemas: ['*'], tables: ['*'], columns: ['email'] }],
        mask_expression: "'***'",
      },
      ctx.admin.id,
    )
    const masked = await ctx.json('GET', `/api/v1/policies/${mask.id}/anchor-coverage`)
    expect(masked.body).toEqual({ policy_id: mask.id, policy_type: 'column_mask', coverage: [] })
  })

  it('answers 404 for an unknown policy and 405 for other methods', async () => {
    const missing = await ctx.json('GET', `/api/v1/policies/${MISSING_ID}/anchor-coverage`)
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('not_found')
    const post = await ctx.call('POST', `/api/v1/policies/${MISSING_ID}/anchor-coverage`)
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET')
  })
})
