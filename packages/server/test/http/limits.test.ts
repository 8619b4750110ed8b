import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { makeUser, PASSWORD, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

describe('limits of users and roles', () => {
  it('creates a user with limits and shows them, only the keys set', async () => {
    const { status, body } = await ctx.json('POST', '/api/v1/users', {
      body: {
        username: unique('lim'),
        password: PASSWORD,
        limits: { max_rows_per_statement: 10, max_concurrent_statements: null },
      },
    })
    expect(status).toBe(201)
    expect(body.limits).toEqual({ max_rows_per_statement: 10 })
    expect((await ctx.json('GET', `/api/v1/users/${body.id}`)).body.limits).toEqual({
      max_rows_per_statement: 10,
    })
  })

  it('patches limits key by key; a key sent as null clears it and null clears them all', async () => {
    const user = await makeUser(ctx)
    expect(user.limits).toBeNull()
    const path = `/api/v1/users/${user.id}`
    let res = await ctx.json('PATCH', path, {
      body: { limits: { max_rows_per_statement: 5, on_row_limit: 'truncate' } },
    })
    expect(res.body.limits).toEqual({ max_rows_per_statement: 5, on_row_limit: 'truncate' })
    res = await ctx.json('PATCH', path, { body: { limits: { max_statements_per_minute: 60 } } })
    expect(res.body.limits).toEqual({
      max_rows_per_statement: 5,
      on_row_limit: 'truncate',
      max_statements_per_minute: 60,
    })
    res = await ctx.json('PATCH', path, { body: { limits: { max_rows_per_statement: null } } })
    expect(res.body.limits).toEqual({ on_row_limit: 'truncate', max_statements_per_minute: 60 })
    res = await ctx.json('PATCH', path, { body: { display_name: 'kept' } })
    expect(res.body.limits).toEqual({ on_row_limit: 'truncate', max_statements_per_minute: 60 })
    res = await ctx.json('PATCH', path, { body: { limits: null } })
    expect(res.body.limits).toBeNull()
    const audit = await ctx.store.audit.admin.list({ resource_id: user.id })
    expect(audit.data.some((e) => (e.changes ?? '').includes('max_statements_per_minute'))).toBe(
      true,
    )
  })

  it('refuses bad limits with 422, naming each field', async () => {
    const user = await makeUser(ctx)
    const { status, body } = await ctx.json('PATCH', `/api/v1/users/${user.id}`, {
      body: {
        limits: {
          max_rows_per_statement: 0,
          on_row_limit: 'drop',
          max_statements_per_minute: 1.5,
          max_concurrent_statements: 'two',
        },
      },
    })
    expect(status).toBe(422)
    expect(body.error.code).toBe('validation_failed')
    const fields = body.error.details.map((d: { field: string }) => d.field).sort()
    expect(fields).toEqual([
      'limits.max_concurrent_statements',
      'limits.max_rows_per_statement',
      'limits.max_statements_per_minute',
      'limits.on_row_limit',
    ])
    const unknown = await ctx.json('POST', '/api/v1/roles', {
      body: { name: unique('r'), limits: { max_rows: 3 } },
    })
    expect(unknown.status).toBe(422)
    expect(unknown.body.error.details[0].field).toBe('limits.max_rows')
    const notObject = await ctx.json('POST', '/api/v1/roles', {
      body: { name: unique('r'), limits: 7 },
    })
    expect(notObject.status).toBe(422)
  })

  it('gives roles limits on create, update and get', async () => {
    const created = await ctx.json('POST', '/api/v1/roles', {
      body: { name: unique('r'), limits: { max_concurrent_statements: 2 } },
    })
    expect(created.status).toBe(201)
    expect(created.body.limits).toEqual({ max_concurrent_statements: 2 })
    const id = created.body.id
    const put = await ctx.json('PUT', `/api/v1/roles/${id}`, {
      body: { limits: { max_rows_per_statement: 100 } },
    })
    expect(put.body.limits).toEqual({ max_concurrent_statements: 2, max_rows_per_statement: 100 })
    expect((await ctx.json('GET', `/api/v1/roles/${id}`)).body.limits).toEqual({
      max_concurrent_statements: 2,
      max_rows_per_statement: 100,
    })
    const list = await ctx.json('GET', '/api/v1/roles?page_size=100')
    expect(list.status).toBe(200)
  })

  it('answers the effective limits: the tightest of the user and the active roles reaching them', async () => {
    const user = await makeUser(ctx, {
      limits: { max_rows_per_statement: 50, on_row_limit: 'truncate' },
    })
    const parent = await ctx.store.roles.create(
      { name: unique('p'), limits: { max_rows_per_statement: 20, max_statements_per_minute: 30 } },
      ctx.admin.id,
    )
    const child = await ctx.store.roles.create(
      { name: unique('c'), limits: { max_statements_per_minute: 100 } },
      ctx.admin.id,
    )
    const inactive = await ctx.store.roles.create(
      { name: unique('i'), is_active: false, limits: { max_concurrent_statements: 1 } },
      ctx.admin.id,
    )
    await ctx.store.roles.addParent(child.id, { parent_role_id: parent.id }, ctx.admin.id)
    await ctx.store.roles.addMembers(child.id, { user_ids: [user.id] }, ctx.admin.id)
    await ctx.store.roles.addMembers(inactive.id, { user_ids: [user.id] }, ctx.admin.id)
    const { status, body } = await ctx.json('GET', `/api/v1/users/${user.id}/effective-limits`)
    expect(status).toBe(200)
    // The parent's row limit sets no on_row_limit: its default, error, is the tighter.
    expect(body).toEqual({
      max_rows_per_statement: 20,
      on_row_limit: 'error',
      max_statements_per_minute: 30,
      max_concurrent_statements: null,
    })
    const alone = await makeUser(ctx)
    expect((await ctx.json('GET', `/api/v1/users/${alone.id}/effective-limits`)).body).toEqual({
      max_rows_per_statement: null,
      on_row_limit: 'error',
      max_statements_per_minute: null,
      max_concurrent_statements: null,
    })
  })
})

describe('limits in policy bundles', () => {
  it('exports the limits that are set and applies a bundle’s limits whole', async () => {
    const name = unique('bundled')
    const role = await ctx.store.roles.create(
      { name, limits: { max_rows_per_statement: 10, max_concurrent_statements: 2 } },
      ctx.admin.id,
    )
    const user = await makeUser(ctx, { limits: { max_statements_per_minute: 30 } })
    const res = await ctx.call('GET', '/api/v1/policy-bundles')
    const bundle = parse(await res.text())
    const bundledRole = bundle.roles.find((r: { name: string }) => r.name === name)
    expect(bundledRole.limits).toEqual({ max_rows_per_statement: 10, max_concurrent_statements: 2 })
    const bundledUser = bundle.users.find((u: { username: string }) => u.username === user.username)
    expect(bundledUser.limits).toEqual({ max_statements_per_minute: 30 })
    // The role's concurrency limit is left out of the bundle: applying it removes it.
    bundledRole.limits = { max_rows_per_statement: 20 }
    const applied = await ctx.json('POST', '/api/v1/policy-bundles', { body: { bundle } })
    expect(applied.status).toBe(200)
    expect(applied.body.steps).toContainEqual({
      action: 'update',
      kind: 'role',
      name,
      fields: ['limits'],
    })
    expect((await ctx.store.roles.get(role.id)).limits).toEqual({ max_rows_per_statement: 20 })
    expect((await ctx.store.users.get(user.id)).limits).toEqual({ max_statements_per_minute: 30 })
  })
})
