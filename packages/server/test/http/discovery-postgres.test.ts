import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setup, type TestContext, unique } from './helpers.js'
import { type ScratchPostgres, scratchPostgres } from './scratch-postgres.js'
import { runJob, UPSTREAM_SQL } from './upstream-fixtures.js'

const url = process.env['PALISADE_TEST_PG_URL']

describe.skipIf(!url)('discovery and fk-suggestions on a PostgreSQL upstream', () => {
  const database = `palisade_discovery_${process.pid}_${Date.now()}`
  let ctx: TestContext
  let scratch: ScratchPostgres | undefined
  let datasourceId: string

  beforeAll(async () => {
    scratch = await scratchPostgres(url ?? '', database, UPSTREAM_SQL)
    ctx = await setup()
    const ds = await ctx.store.datasources.create(
      {
        name: unique('pg'),
        ds_type: 'postgres',
        config: scratch.config,
      },
      ctx.admin.id,
    )
    datasourceId = ds.id
  })

  afterAll(async () => {
    await ctx?.close()
    await scratch?.drop()
  })

  it('discovers schemas and columns, saves a selection and suggests foreign keys', async () => {
    const schemas = await runJob(ctx, datasourceId, { action: 'discover_schemas' })
    expect(schemas.result.map((s: { schema_name: string }) => s.schema_name)).toEqual([
      'app',
      'public',
    ])
    const columns = await runJob(ctx, datasourceId, {
      action: 'discover_columns',
      tables: [{ schema: 'public', table: 'payments' }],
    })
    expect(columns.result[2]).toMatchObject({
      column_name: 'amount',
      data_type: 'numeric(10,2)',
      is_nullable: true,
    })
    const tables = ['tenants', 'orders', 'payments'].map((table_name) => ({
      table_name,
      is_selected: true,
    }))
    const saved = await runJob(ctx, datasourceId, {
      action: 'save_catalog',
      schemas: [{ schema_name: 'public', is_selected: true, tables }],
    })
    expect(saved.result).toEqual({ exposed_tables: 3, exposed_columns: 8 })
    const { status, body } = await ctx.json(
      'GET',
      `/api/v1/datasources/${datasourceId}/fk-suggestions`,
    )
    expect(status).toBe(200)
    expect(body.map((s: any) => `${s.child_table_name}.${s.child_column_name}`)).toEqual([
      'orders.tenant_id',
      'payments.order_id',
    ])
  })
})

describe.skipIf(Boolean(url))('discovery and fk-suggestions on a PostgreSQL upstream', () => {
  it.skip('needs PALISADE_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)', () => {})
})
