import { PGlite } from '@electric-sql/pglite'
import { exposedOf } from '@palisade/store'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, makeDatasource, setup, type TestContext } from './helpers.js'
import {
  blackhole,
  closed,
  closedPort,
  finished,
  pgliteDirUpstream,
  pgliteUpstream,
  postgresAt,
  removeUpstreamDirs,
  runJob,
  submit,
} from './upstream-fixtures.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(async () => {
  await ctx.close()
  await removeUpstreamDirs()
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** The selection most tests save: public with three tables, `orders.note` unselected. */
const SELECTION = {
  action: 'save_catalog',
  schemas: [
    {
      schema_name: 'public',
      is_selected: true,
      tables: [
        {
          table_name: 'orders',
          is_selected: true,
          columns: [{ column_name: 'note', is_selected: false }],
        },
        { table_name: 'payments', is_selected: true },
        { table_name: 'tenants', is_selected: true },
        { table_name: 'codes', is_selected: false },
      ],
    },
    { schema_name: 'app', schema_alias: 'config', is_selected: false, tables: [] },
  ],
}

async function auditCount(resourceId: string): Promise<number> {
  return (await ctx.json('GET', `/api/v1/audit/admin?resource_id=${resourceId}`)).body.total
}

describe('discovery jobs', () => {
  it('discovers schemas in a background job, without system schemas or audit', async () => {
    const ds = await pgliteUpstream(ctx)
    const audits = await auditCount(ds.id)
    const res = await ctx.call('POST', `/api/v1/datasources/${ds.id}/discover`, {
      body: { action: 'discover_schemas' },
    })
    expect(res.status).toBe(202)
    const { job_id } = (await res.json()) as { job_id: string }
    expect(job_id).toMatch(UUID)
    expect(res.headers.get('location')).toBe(`/api/v1/datasources/${ds.id}/discover/${job_id}`)
    const job = await finished(ctx, ds.id, job_id)
    expect(job).toEqual({
      job_id,
      datasource_id: ds.id,
      action: 'discover_schemas',
      status: 'completed',
      result: [
        { schema_name: 'app', schema_alias: null, is_already_selected: false },
        { schema_name: 'public', schema_alias: null, is_already_selected: false },
      ],
      error: null,
      started_at: expect.stringMatching(ISO),
      finished_at: expect.stringMatching(ISO),
      tables_done: null,
      tables_total: null,
    })
    expect(await auditCount(ds.id)).toBe(audits)
  })

  it('discovers tables and views of the listed schemas', async () => {
    const { ds } = await pgliteDirUpstream(ctx)
    const job = await runJob(ctx, ds.id, { action: 'discover_tables', schemas: ['public'] })
    expect(job.status).toBe('completed')
    const names = job.result.map((t: { table_name: string }) => t.table_name)
    expect(names).toEqual([
      'codes',
      'order_notes',
      'orders',
      'pair_refs',
      'pairs',
      'payments',
      'tagged',
      'tenants',
    ])
    expect(job.result[1]).toEqual({
      schema_name: 'public',
      table_name: 'order_notes',
      table_type: 'VIEW',
      is_already_selected: false,
    })
  })

  it('discovers columns with their metadata; unstored columns report selected', async () => {
    const { ds } = await pgliteDirUpstream(ctx)
    const job = await runJob(ctx, ds.id, {
      action: 'discover_columns',
      tables: [
        { schema: 'public', table: 'orders' },
        { schema: 'public', table: 'payments' },
        { schema: 'public', table: 'orders' },
      ],
    })
    expect(job.result).toHaveLength(6)
    expect(job.result[0]).toEqual({
      schema_name: 'public',
      table_name: 'orders',
      column_name: 'id',
      ordinal_position: 1,
      data_type: 'integer',
      is_nullable: false,
      column_default: null,
      is_already_selected: true,
    })
    expect(job.result[2]).toMatchObject({ column_name: 'note', column_default: "'none'::text" })
    expect(job.result[5]).toMatchObject({ column_name: 'amount', data_type: 'numeric(10,2)' })
  })

  it('pages the stored catalog by schema and table name; an empty schema is one entry', async () => {
    const { ds } = await pgliteDirUpstream(ctx)
    await runJob(ctx, ds.id, SELECTION)
    const page = async (query: string) => {
      const { status, body } = await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog${query}`)
      expect(status).toBe(200)
      return {
        ...body,
        names: body.schemas.map((s: any) => [
          s.schema_name,
          s.tables.map((t: any) => t.table_name),
        ]),
      }
    }
    const first = await page('?page_size=2')
    expect(first).toMatchObject({ datasource_id: ds.id, total: 5, page: 1, page_size: 2 })
    expect(first.names).toEqual([
      ['app', []],
      ['public', ['codes']],
    ])
    expect((await page('?page=2&page_size=2')).names).toEqual([['public', ['orders', 'payments']]])
    expect(await page('?search=PAY')).toMatchObject({ total: 1, names: [['public', ['payments']]] })
    expect(await page('?schema=app')).toMatchObject({ total: 1, names: [['app', []]] })
    expect(await page('?schema=public&search=o')).toMatchObject({
      total: 2,
      names: [['public', ['codes', 'orders']]],
    })
    const bad = await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog?page_size=0`)
    expect(bad.status).toBe(400)
  })

  it('saves a selection with live column metadata and audits it once', async () => {
    const { ds } = await pgliteDirUpstream(ctx)
    const before = await auditCount(ds.id)
    const job = await runJob(ctx, ds.id, SELECTION)
    expect(job).toMatchObject({
      action: 'save_catalog',
      status: 'completed',
      result: { exposed_tables: 3, exposed_columns: 7 },
      tables_done: 4,
      tables_total: 4,
    })
    const catalog = (await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)).body
    expect(catalog.schemas.map((s: { schema_name: string }) => s.schema_name)).toEqual([
      'app',
      'public',
    ])
    expect(catalog.schemas[0]).toMatchObject({ schema_alias: 'config', is_selected: false })
    const orders = catalog.schemas[1].tables.find(
      (t: { table_name: string }) => t.table_name === 'orders',
    )
    expect(orders.columns.map((c: any) => [c.column_name, c.is_selected])).toEqual([
      ['id', true],
      ['tenant_id', true],
      ['note', false],
    ])
    expect(orders.columns[2]).toMatchObject({ column_default: "'none'::text", is_nullable: true })
    expect(await auditCount(ds.id)).toBe(before + 1)
    const [entry] = (
      await ctx.json('GET', `/api/v1/audit/admin?resource_id=${ds.id}&action=update&limit=1`)
    ).body.data
    expect(entry.actor_id).toBe(ctx.admin.id)
    const changes = JSON.parse(entry.changes)
    expect(changes).toMatchObject({ field: 'catalog', source: 'save_catalog' })
    expect(changes.after['public.orders']).toEqual(['id', 'tenant_id'])

    const schemas = await runJob(ctx, ds.id, { action: 'discover_schemas' })
    expect(schemas.result).toEqual([
      { schema_name: 'app', schema_alias: 'config', is_already_selected: false },
      { schema_name: 'public', schema_alias: null, is_already_selected: true },
    ])
    const tables = await runJob(ctx, ds.id, { action: 'discover_tables', schemas: ['public'] })
    const selected = tables.result.filter((t: any) => t.is_already_selected)
    expect(selected.map((t: any) => t.table_name)).toEqual(['orders', 'payments', 'tenants'])
    const columns = await runJob(ctx, ds.id, {
      action: 'discover_columns',
      tables: [{ schema: 'public', table: 'orders' }],
    })
    expect(columns.result.map((c: any) => c.is_already_selected)).toEqual([true, true, false])
  })

  it('discovers partitions and inheritance children with their ancestors, whose policies they carry', async () => {
    const ds = await pgliteUpstream(
      ctx,
      `CREATE TABLE person (name text, tenant int);
       CREATE TABLE student (gpa float8) INHERITS (person);
       CREATE TABLE events (id int, at date) PARTITION BY RANGE (at);
       CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');`,
    )
    const tables = await runJob(ctx, ds.id, { action: 'discover_tables', schemas: ['public'] })
    expect(tables.result.map((t: { table_name: string }) => t.table_name)).toEqual([
      'events',
      'events_2026',
      'person',
      'student',
    ])
    const selected = (names: string[]) =>
      names.map((table_name) => ({ table_name, is_selected: true }))
    const saved = await runJob(ctx, ds.id, {
      action: 'save_catalog',
      schemas: [
        {
          schema_name: 'public',
          is_selected: true,
          tables: selected(['events', 'events_2026', 'person', 'student']),
        },
      ],
    })
    expect(saved.status).toBe('completed')
    const catalog = (await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)).body
    const byName = new Map(
      catalog.schemas[0].tables.map((t: { table_name: string }) => [t.table_name, t]),
    )
    expect(byName.get('student')).toMatchObject({
      ancestors: [{ schema: 'public', table: 'person' }],
    })
    expect(byName.get('events_2026')).toMatchObject({
      ancestors: [{ schema: 'public', table: 'events' }],
    })
    expect(byName.get('person')).not.toHaveProperty('ancestors')
    // Sessions see them: a parent's policies apply to the child (core's inheritance tests).
    const exposed = exposedOf(await ctx.store.catalog.get(ds.id))
    const student = exposed.schemas[0]?.tables.find((t) => t.name === 'student')
    expect(student?.ancestors).toEqual([{ schema: 'public', table: 'person' }])
  })

  it('records primary keys, known to sessions only while every key column is exposed', async () => {
    const ds = await pgliteUpstream(
      ctx,
      `CREATE TABLE lines (order_id int, line int, sku text, PRIMARY KEY (order_id, line));
       CREATE TABLE notes (id int PRIMARY KEY, body text);
       CREATE TABLE loose (a int UNIQUE, b text);`,
    )
    const saved = await runJob(ctx, ds.id, {
      action: 'save_catalog',
      schemas: [
        {
          schema_name: 'public',
          is_selected: true,
          tables: [
            { table_name: 'lines', is_selected: true },
            { table_name: 'loose', is_selected: true },
            {
              table_name: 'notes',
              is_selected: true,
              columns: [
                { column_name: 'id', is_selected: false },
                { column_name: 'body', is_selected: true },
              ],
            },
          ],
        },
      ],
    })
    expect(saved.status).toBe('completed')
    const keys = () =>
      ctx.store.catalog
        .get(ds.id)
        .then((view) =>
          Object.fromEntries(
            (exposedOf(view).schemas[0]?.tables ?? []).map((t) => [t.name, t.primaryKey]),
          ),
        )
    // A unique constraint is no primary key; a key with a hidden column is not shown.
    expect(await keys()).toEqual({
      lines: ['order_id', 'line'],
      loose: undefined,
      notes: undefined,
    })
    const catalog = (await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)).body
    expect(catalog.schemas[0].tables[0]).not.toHaveProperty('primary_key')
  })

  it('fails a save whose selected table does not exist upstream and stores nothing', async () => {
    const { ds } = await pgliteDirUpstream(ctx)
    const job = await runJob(ctx, ds.id, {
      action: 'save_catalog',
      schemas: [
        {
          schema_name: 'public',
          is_selected: true,
          tables: [{ table_name: 'gone', is_selected: true }],
        },
      ],
    })
    expect(job).toMatchObject({ status: 'failed', result: null, finished_at: expect.any(String) })
    expect(job.error).toContain('public.gone')
    const catalog = (await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)).body
    expect(catalog.schemas).toEqual([])
  })

  it('stores view definitions, says how each relation is read, and keeps them current', async () => {
    const { ds, dataDir } = await pgliteDirUpstream(ctx)
    const alter = async (sql: string) => {
      const upstream = await PGlite.create(dataDir)
      await upstream.exec(sql)
      await upstream.close()
    }
    await alter('CREATE MATERIALIZED VIEW order_snapshot AS SELECT id, tenant_id FROM orders')
    const selection = structuredClone(SELECTION)
    selection.schemas[0]?.tables.push(
      { table_name: 'order_notes', is_selected: true } as never,
      // A request cannot pass a view off as a table: the live kind wins.
      { table_name: 'order_snapshot', table_type: 'TABLE', is_selected: true } as never,
    )
    await runJob(ctx, ds.id, selection)
    const read = async () => {
      const catalog = (await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)).body
      const tables = catalog.schemas.find((s: any) => s.schema_name === 'public').tables
      return new Map<string, any>(tables.map((t: any) => [t.table_name, t]))
    }
    let tables = await read()
    expect(tables.get('orders')).not.toHaveProperty('expansion')
    expect(tables.get('orders')).not.toHaveProperty('view_definition')
    expect(tables.get('order_notes')).toMatchObject({
      table_type: 'VIEW',
      view_definition: expect.stringContaining('FROM public.orders'),
      expansion: {
        expansion: 'expanded',
        reason: null,
        reads: [{ schema: 'public', table: 'orders' }],
      },
    })
    expect(tables.get('order_snapshot')).toMatchObject({
      table_type: 'MATERIALIZED VIEW',
      expansion: { expansion: 'fail_closed', reason: expect.stringContaining('materialized') },
    })
    // A view that starts reading an unexposed table is reported as failing closed after sync.
    await alter(`CREATE OR REPLACE VIEW order_notes AS
      SELECT o.id, o.note FROM orders o JOIN codes c ON c.label = o.note`)
    await runJob(ctx, ds.id, { action: 'sync_catalog' })
    tables = await read()
    expect(tables.get('order_notes')).toMatchObject({
      view_definition: expect.stringContaining('public.codes'),
      expansion: {
        expansion: 'fail_closed',
        reason: 'reads public.codes, which is not exposed',
        reads: [
          { schema: 'public', table: 'codes' },
          { schema: 'public', table: 'orders' },
        ],
      },
    })
  })

  it('syncs the stored selection with the upstream and stores the drift report', async () => {
    const { ds, dataDir } = await pgliteDirUpstream(ctx)
    await runJob(ctx, ds.id, SELECTION)
    const alter = async (sql: string) => {
      const upstream = await PGlite.create(dataDir)
      await upstream.exec(sql)
      await upstream.close()
    }
    await alter(`DROP VIEW order_notes; ALTER TABLE orders DROP COLUMN note;
      ALTER TABLE orders ADD COLUMN status text NOT NULL DEFAULT 'new';
      ALTER TABLE payments ALTER COLUMN amount TYPE numeric(12,2);
      CREATE SCHEMA archive; CREATE TABLE refunds (id int);`)
    const before = await auditCount(ds.id)
    const job = await runJob(ctx, ds.id, { action: 'sync_catalog' })
    const report = {
      added_schemas: ['archive'],
      removed_schemas: [],
      added_tables: [
        'app.settings',
        'public.pair_refs',
        'public.pairs',
        'public.refunds',
        'public.tagged',
      ],
      removed_tables: [],
      added_columns: ['public.orders.status'],
      removed_columns: ['public.orders.note'],
      changed_columns: ['public.payments.amount'],
      has_breaking_changes: false,
    }
    expect(job).toMatchObject({ action: 'sync_catalog', status: 'completed', result: report })
    const stored = (await ctx.json('GET', `/api/v1/datasources/${ds.id}`)).body
    expect(stored.last_sync_result).toEqual(report)
    expect(stored.last_sync_at).toMatch(ISO)
    const catalog = (await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)).body
    const tables = catalog.schemas[1].tables
    const orders = tables.find((t: any) => t.table_name === 'orders')
    expect(orders.columns.map((c: any) => [c.column_name, c.is_selected])).toEqual([
      ['id', true],
      ['tenant_id', true],
      ['status', true],
    ])
    const payments = tables.find((t: any) => t.table_name === 'payments')
    expect(payments.columns[2]).toMatchObject({ column_name: 'amount', data_type: 'numeric(12,2)' })
    expect(await auditCount(ds.id)).toBe(before + 1)
    const [entry] = (
      await ctx.json('GET', `/api/v1/audit/admin?resource_id=${ds.id}&action=update&limit=1`)
    ).body.data
    expect(JSON.parse(entry.changes)).toEqual({
      field: 'catalog',
      source: 'sync_catalog',
      before: { 'public.orders': ['id', 'tenant_id'] },
      after: { 'public.orders': ['id', 'tenant_id', 'status'] },
    })

    await alter('DROP TABLE payments')
    const breaking = await runJob(ctx, ds.id, { action: 'sync_catalog' })
    expect(breaking.result).toMatchObject({
      removed_tables: ['public.payments'],
      has_breaking_changes: true,
    })
  })
})

describe('discovery job errors', () => {
  it('answers 404 for an unknown datasource or job and 400 for a malformed job id', async () => {
    const body = { action: 'discover_schemas' }
    const missing = await ctx.json('POST', `/api/v1/datasources/${MISSING_ID}/discover`, { body })
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('not_found')
    const ds = await makeDatasource(ctx)
    const base = `/api/v1/datasources/${ds.id}/discover`
    expect((await ctx.json('GET', `${base}/${MISSING_ID}`)).status).toBe(404)
    expect((await ctx.json('DELETE', `${base}/${MISSING_ID}`)).status).toBe(404)
    const bad = await ctx.json('GET', `${base}/not-a-uuid`)
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('invalid_parameter')
    const { ds: other } = await pgliteDirUpstream(ctx)
    const jobId = await submit(ctx, other.id, body)
    expect((await ctx.json('GET', `${base}/${jobId}`)).status).toBe(404)
    await finished(ctx, other.id, jobId)
  })

  it('rejects bad bodies with 422 before accepting a job', async () => {
    const ds = await makeDatasource(ctx)
    const url = `/api/v1/datasources/${ds.id}/discover`
    const cases: [unknown, string, string][] = [
      [{}, 'action', 'required'],
      [{ action: 'explode' }, 'action', 'invalid_enum'],
      [{ action: 'discover_tables' }, 'schemas', 'required'],
      [{ action: 'discover_tables', schemas: [] }, 'schemas', 'too_short'],
      [
        { action: 'discover_columns', tables: [{ schema: 'public' }] },
        'tables[0].table',
        'required',
      ],
      [
        {
          action: 'save_catalog',
          schemas: [{ schema_name: 'public', schema_alias: '1bad', is_selected: true, tables: [] }],
        },
        'schemas[0].schema_alias',
        'pattern',
      ],
      [
        {
          action: 'save_catalog',
          schemas: [
            { schema_name: 'public', is_selected: true, tables: [] },
            { schema_name: 'app', schema_alias: 'public', is_selected: true, tables: [] },
          ],
        },
        'schemas[1].schema_alias',
        'duplicate',
      ],
    ]
    for (const [body, field, code] of cases) {
      const { status, body: res } = await ctx.json('POST', url, { body })
      expect(status, JSON.stringify(body)).toBe(422)
      expect(res.error.code).toBe('validation_failed')
      expect(res.error.details).toContainEqual(expect.objectContaining({ field, code }))
    }
    const malformed = await ctx.json('POST', url, { body: '{"action":' })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.code).toBe('malformed_json')
    const get = await ctx.call('PUT', url, { body: {} })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
  })

  it('fails a job whose upstream is unreachable, with the driver message', async () => {
    const ds = await postgresAt(ctx, await closedPort())
    const job = await runJob(ctx, ds.id, { action: 'discover_schemas' })
    expect(job).toMatchObject({ status: 'failed', result: null })
    expect(typeof job.error).toBe('string')
    expect(job.error.length).toBeGreaterThan(0)
  })

  it('allows one running job per datasource and cancels it', async () => {
    const hole = await blackhole()
    try {
      const ds = await postgresAt(ctx, hole.port)
      const base = `/api/v1/datasources/${ds.id}/discover`
      const jobId = await submit(ctx, ds.id, { action: 'discover_schemas' })
      const socket = await hole.accepted()
      const busy = await ctx.json('POST', base, {
        body: { action: 'discover_tables', schemas: ['x'] },
      })
      expect(busy.status).toBe(409)
      expect(busy.body.error.code).toBe('invalid_state')
      expect(busy.body.error.details[0]).toMatchObject({ field: 'job_id', message: jobId })
      expect((await ctx.json('GET', `${base}/${jobId}`)).body.status).toBe('running')

      expect((await ctx.call('DELETE', `${base}/${jobId}`)).status).toBe(204)
      await closed(socket)
      const job = (await ctx.json('GET', `${base}/${jobId}`)).body
      expect(job).toMatchObject({ status: 'cancelled', result: null, error: null })
      expect(job.finished_at).toMatch(ISO)
      const again = await ctx.json('DELETE', `${base}/${jobId}`)
      expect(again.status).toBe(409)
      expect(again.body.error.code).toBe('invalid_state')

      const next = await submit(ctx, ds.id, { action: 'discover_schemas' })
      expect(next).not.toBe(jobId)
      expect((await ctx.call('DELETE', `${base}/${next}`)).status).toBe(204)
    } finally {
      await hole.close()
    }
  })

  it('cancels the running job when its datasource is deleted', async () => {
    const hole = await blackhole()
    try {
      const ds = await postgresAt(ctx, hole.port)
      const jobId = await submit(ctx, ds.id, { action: 'discover_schemas' })
      const socket = await hole.accepted()
      expect((await ctx.call('DELETE', `/api/v1/datasources/${ds.id}`)).status).toBe(204)
      await closed(socket)
      const gone = await ctx.json('GET', `/api/v1/datasources/${ds.id}/discover/${jobId}`)
      expect(gone.status).toBe(404)
    } finally {
      await hole.close()
    }
  })
})

describe('discovery in the openapi document', () => {
  it('describes the action union and the 202 from the validation schema', async () => {
    const { body } = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    const post = body.paths['/api/v1/datasources/{id}/discover'].post
    expect(post.responses['202']).toBeDefined()
    const variants = post.requestBody.content['application/json'].schema.oneOf
    expect(variants.map((v: any) => v.properties.action.const)).toEqual([
      'discover_schemas',
      'discover_tables',
      'discover_columns',
      'save_catalog',
      'sync_catalog',
    ])
    const job = body.paths['/api/v1/datasources/{id}/discover/{job_id}']
    expect(Object.keys(job).sort()).toEqual(['delete', 'get'])
  })
})
