import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, makeDatasource, makeUser, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

async function policy() {
  return ctx.store.policies.create(
    {
      name: unique('p'),
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filter_expression: 'tenant = 1',
    },
    ctx.admin.id,
  )
}

describe('datasources', () => {
  it('lists the datasource types', async () => {
    const { status, body } = await ctx.json('GET', '/api/v1/datasource-types')
    expect(status).toBe(200)
    expect(body.map((t: { ds_type: string }) => t.ds_type).sort()).toEqual(['pglite', 'postgres'])
  })

  it('creates a postgres datasource without ever returning the password', async () => {
    const res = await ctx.call('POST', '/api/v1/datasources', {
      body: {
        name: unique('pg'),
        ds_type: 'postgres',
        config: { host: 'db', database: 'app', username: 'u', password: 'Secret-1' },
      },
    })
    expect(res.status).toBe(201)
    const ds = (await res.json()) as any
    expect(res.headers.get('location')).toBe(`/api/v1/datasources/${ds.id}`)
    expect(ds.config).toMatchObject({ host: 'db', password_set: true })
    expect(ds.config).not.toHaveProperty('password')
    expect(ds.access_mode).toBe('policy_required')
  })

  it('rejects a bad datasource with 422 and a duplicate name with 409', async () => {
    const bad = await ctx.json('POST', '/api/v1/datasources', {
      body: { name: 'x', ds_type: 'oracle', config: 'nope' },
    })
    expect(bad.status).toBe(422)
    const fields = bad.body.error.details.map((d: { field: string }) => d.field)
    expect(fields).toEqual(expect.arrayContaining(['ds_type', 'config']))
    const ds = await makeDatasource(ctx)
    const dup = await ctx.json('POST', '/api/v1/datasources', {
      body: { name: ds.name, ds_type: 'pglite', config: {} },
    })
    expect(dup.status).toBe(409)
  })

  it('gets, updates, lists and deletes a datasource', async () => {
    const ds = await makeDatasource(ctx)
    expect((await ctx.json('GET', `/api/v1/datasources/${ds.id}`)).body.name).toBe(ds.name)
    const upd = await ctx.json('PATCH', `/api/v1/datasources/${ds.id}`, {
      body: { access_mode: 'open' },
    })
    expect(upd.body.access_mode).toBe('open')
    const list = await ctx.json('GET', `/api/v1/datasources?search=${ds.name}`)
    expect(list.body).toMatchObject({ total: 1, page: 1, page_size: 20 })
    expect((await ctx.call('DELETE', `/api/v1/datasources/${ds.id}`)).status).toBe(204)
    expect((await ctx.call('GET', `/api/v1/datasources/${ds.id}`)).status).toBe(404)
  })

  it('sets, validates, audits and clears the pool mode', async () => {
    const created = await ctx.json('POST', '/api/v1/datasources', {
      body: {
        name: unique('pg'),
        ds_type: 'postgres',
        config: { host: 'db', database: 'app', username: 'u' },
      },
    })
    expect(created.status).toBe(201)
    expect(created.body.pool_mode).toBeNull()
    const id = created.body.id as string
    const set = await ctx.json('PATCH', `/api/v1/datasources/${id}`, {
      body: { pool_mode: 'transaction' },
    })
    expect(set.body.pool_mode).toBe('transaction')
    const bad = await ctx.json('PATCH', `/api/v1/datasources/${id}`, {
      body: { pool_mode: 'statement' },
    })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details).toEqual([
      expect.objectContaining({
        field: 'pool_mode',
        message: 'pool_mode expected session or transaction',
      }),
    ])
    const audit = await ctx.json('GET', `/api/v1/audit/admin?resource_id=${id}`)
    const update = audit.body.data.find((e: { action: string }) => e.action === 'update')
    const changes = typeof update.changes === 'string' ? JSON.parse(update.changes) : update.changes
    expect(changes).toEqual({
      before: { pool_mode: null },
      after: { pool_mode: 'transaction' },
    })
    const cleared = await ctx.json('PATCH', `/api/v1/datasources/${id}`, {
      body: { pool_mode: null },
    })
    expect(cleared.body.pool_mode).toBeNull()
    const openapi = await ctx.json('GET', '/api/v1/openapi.json')
    expect(JSON.stringify(openapi.body)).toContain('"transaction"')
  })

  it('tests a datasource connection and reports the failure as 200', async () => {
    const ds = await ctx.store.datasources.create(
      {
        name: unique('pg'),
        ds_type: 'postgres',
        config: { host: '127.0.0.1', port: 1, database: 'x', username: 'x' },
      },
      ctx.admin.id,
    )
    const { status, body } = await ctx.json('POST', `/api/v1/datasources/${ds.id}/test`)
    expect(status).toBe(200)
    expect(body.success).toBe(false)
    expect(typeof body.message).toBe('string')
    expect((await ctx.call('POST', `/api/v1/datasources/${MISSING_ID}/test`)).status).toBe(404)
  })

  it('returns the empty stored catalog', async () => {
    const ds = await makeDatasource(ctx)
    const { status, body } = await ctx.json('GET', `/api/v1/datasources/${ds.id}/catalog`)
    expect(status).toBe(200)
    expect(body).toEqual({ datasource_id: ds.id, schemas: [], total: 0, page: 1, page_size: 100 })
  })
})

describe('datasource access', () => {
  it('replaces the user, role and all-scope lists and reads them back', async () => {
    const ds = await makeDatasource(ctx)
    const user = await makeUser(ctx)
    const role = await ctx.store.roles.create({ name: unique('r') }, ctx.admin.id)
    const base = `/api/v1/datasources/${ds.id}`
    expect((await ctx.call('PUT', `${base}/users`, { body: { user_ids: [user.id] } })).status).toBe(
      204,
    )
    expect(
      (await ctx.call('PUT', `${base}/access/roles`, { body: { role_ids: [role.id] } })).status,
    ).toBe(204)
    expect((await ctx.call('PUT', `${base}/access/all`, { body: { enabled: true } })).status).toBe(
      204,
    )
    const summary = await ctx.json('GET', `${base}/access`)
    expect(summary.body).toMatchObject({
      datasource_id: ds.id,
      all: true,
      users: [{ id: user.id, username: user.username }],
      roles: [{ id: role.id, name: role.name, is_active: true }],
    })
    expect((await ctx.json('GET', `${base}/users`)).body[0].id).toBe(user.id)
    expect((await ctx.json('GET', `${base}/access/roles`)).body[0].id).toBe(role.id)
  })

  it('answers unknown ids with 404, inactive roles with 400 and PATCH with 405', async () => {
    const ds = await makeDatasource(ctx)
    const base = `/api/v1/datasources/${ds.id}`
    const unknown = await ctx.json('PUT', `${base}/users`, { body: { user_ids: [MISSING_ID] } })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.details[0].field).toBe('user_ids[0]')
    const off = await ctx.store.roles.create({ name: unique('r'), is_active: false }, ctx.admin.id)
    const inactive = await ctx.json('PUT', `${base}/access/roles`, { body: { role_ids: [off.id] } })
    expect(inactive.status).toBe(400)
    expect(inactive.body.error.code).toBe('inactive_role')
    expect((await ctx.json('PUT', `${base}/users`, { body: { user_ids: 'x' } })).status).toBe(422)
    const patch = await ctx.call('PATCH', `${base}/users`, { body: { user_ids: [] } })
    expect(patch.status).toBe(405)
    expect(patch.headers.get('allow')).toBe('GET, PUT')
    const missingDs = await ctx.json('PUT', `/api/v1/datasources/${MISSING_ID}/access/all`, {
      body: {},
    })
    expect(missingDs.status).toBe(404)
  })
})

describe('policy assignments', () => {
  it('assigns a policy with 201 and lists and removes it', async () => {
    const ds = await makeDatasource(ctx)
    const p = await policy()
    const base = `/api/v1/datasources/${ds.id}/policies`
    const res = await ctx.call('POST', base, { body: { policy_id: p.id } })
    expect(res.status).toBe(201)
    const a = (await res.json()) as any
    expect(a).toMatchObject({ policy_id: p.id, scope: 'all', priority: 100 })
    expect(res.headers.get('location')).toBe(`${base}/${a.id}`)
    const dup = await ctx.json('POST', base, { body: { policy_id: p.id } })
    expect(dup.status).toBe(409)
    expect((await ctx.json('GET', base)).body).toHaveLength(1)
    expect((await ctx.call('DELETE', `${base}/${a.id}`)).status).toBe(204)
    expect((await ctx.call('DELETE', `${base}/${a.id}`)).status).toBe(404)
  })

  it('checks scope_mismatch before the body schema', async () => {
    const ds = await makeDatasource(ctx)
    const p = await policy()
    const base = `/api/v1/datasources/${ds.id}/policies`
    const mismatch = await ctx.json('POST', base, {
      body: { policy_id: p.id, scope: 'user', priority: -5 },
    })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body.error.code).toBe('scope_mismatch')
    const schema = await ctx.json('POST', base, { body: { policy_id: p.id, priority: -5 } })
    expect(schema.status).toBe(422)
    const missing = await ctx.json('POST', base, { body: { policy_id: MISSING_ID } })
    expect(missing.status).toBe(404)
  })
})

describe('relationships and anchors', () => {
  it('lists empty relationships and anchors and 404s unknown tables', async () => {
    const ds = await makeDatasource(ctx)
    const base = `/api/v1/datasources/${ds.id}`
    expect((await ctx.json('GET', `${base}/relationships`)).body).toEqual([])
    expect((await ctx.json('GET', `${base}/column-anchors`)).body).toEqual([])
    const rel = await ctx.json('POST', `${base}/relationships`, {
      body: {
        child_table_id: MISSING_ID,
        child_column_name: 'order_id',
        parent_table_id: MISSING_ID,
        parent_column_name: 'id',
      },
    })
    expect(rel.status).toBe(404)
    const bad = await ctx.json('POST', `${base}/column-anchors`, { body: { child_table_id: 'x' } })
    expect(bad.status).toBe(422)
  })
})
