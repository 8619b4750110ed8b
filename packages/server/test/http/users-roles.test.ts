import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  MISSING_ID,
  makeDatasource,
  makeUser,
  PASSWORD,
  setup,
  type TestContext,
  unique,
} from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

describe('users', () => {
  it('creates a user with 201, a Location header and an audit entry by the caller', async () => {
    const username = unique('alice')
    const res = await ctx.call('POST', '/api/v1/users', {
      body: { username, password: PASSWORD, email: 'a@example.com' },
    })
    expect(res.status).toBe(201)
    const user = (await res.json()) as any
    expect(res.headers.get('location')).toBe(`/api/v1/users/${user.id}`)
    expect(user).toMatchObject({ username, is_admin: false, is_active: true, attributes: {} })
    expect(user).not.toHaveProperty('password')
    const audit = await ctx.store.audit.admin.list({ resource_id: user.id })
    expect(audit.data[0]).toMatchObject({ action: 'create', actor_id: ctx.admin.id })
  })

  it('rejects a duplicate username with 409 already_exists', async () => {
    const user = await makeUser(ctx)
    const { status, body } = await ctx.json('POST', '/api/v1/users', {
      body: { username: user.username, password: PASSWORD },
    })
    expect(status).toBe(409)
    expect(body.error.code).toBe('already_exists')
  })

  it('gets, updates with PUT and PATCH, and reports a missing user as 404', async () => {
    const user = await makeUser(ctx)
    expect((await ctx.json('GET', `/api/v1/users/${user.id}`)).body.id).toBe(user.id)
    const put = await ctx.json('PUT', `/api/v1/users/${user.id}`, { body: { display_name: 'A' } })
    expect(put.status).toBe(200)
    expect(put.body.display_name).toBe('A')
    const patch = await ctx.json('PATCH', `/api/v1/users/${user.id}`, {
      body: { display_name: null },
    })
    expect(patch.body.display_name).toBeNull()
    expect((await ctx.json('GET', `/api/v1/users/${MISSING_ID}`)).status).toBe(404)
  })

  it('refuses a password in a user update with 422 not_allowed', async () => {
    const user = await makeUser(ctx)
    const { status, body } = await ctx.json('PUT', `/api/v1/users/${user.id}`, {
      body: { password: PASSWORD },
    })
    expect(status).toBe(422)
    expect(body.error.details[0]).toMatchObject({ field: 'password', code: 'not_allowed' })
  })

  it('refuses to let the caller remove their own admin access with 409 admin_lockout', async () => {
    const demote = await ctx.json('PUT', `/api/v1/users/${ctx.admin.id}`, {
      body: { is_admin: false },
    })
    expect(demote.status).toBe(409)
    expect(demote.body.error.code).toBe('admin_lockout')
    const del = await ctx.json('DELETE', `/api/v1/users/${ctx.admin.id}`)
    expect(del.status).toBe(409)
  })

  it('deletes a user with 204 and an empty body', async () => {
    const user = await makeUser(ctx)
    const res = await ctx.call('DELETE', `/api/v1/users/${user.id}`)
    expect(res.status).toBe(204)
    expect(await res.text()).toBe('')
    expect((await ctx.call('DELETE', `/api/v1/users/${user.id}`)).status).toBe(404)
  })

  it('validates a new password with 422', async () => {
    const user = await makeUser(ctx)
    const { status } = await ctx.json('PUT', `/api/v1/users/${user.id}/password`, {
      body: { password: 'alllowercase' },
    })
    expect(status).toBe(422)
  })

  it('paginates users with clamping and rejects a bad page with 400', async () => {
    for (let i = 0; i < 3; i++) await makeUser(ctx)
    const page = await ctx.json('GET', '/api/v1/users?page=2&page_size=2')
    expect(page.body).toMatchObject({ page: 2, page_size: 2 })
    expect(page.body.data).toHaveLength(2)
    const clamped = await ctx.json('GET', '/api/v1/users?page_size=1000')
    expect(clamped.body.page_size).toBe(100)
    const past = await ctx.json('GET', '/api/v1/users?page=999')
    expect(past.body.data).toEqual([])
    expect(past.body.total).toBeGreaterThan(3)
    for (const q of ['page=0', 'page_size=abc', 'page=1.5']) {
      const bad = await ctx.json('GET', `/api/v1/users?${q}`)
      expect(bad.status).toBe(400)
      expect(bad.body.error.code).toBe('invalid_parameter')
    }
  })

  it('filters users by a case-insensitive search', async () => {
    const user = await makeUser(ctx, { display_name: 'Zebra Keeper' })
    const { body } = await ctx.json('GET', '/api/v1/users?search=zebra')
    expect(body.data.map((u: { id: string }) => u.id)).toEqual([user.id])
  })

  it('lists effective policies and requires a valid datasource_id', async () => {
    const user = await makeUser(ctx)
    const ds = await makeDatasource(ctx)
    const ok = await ctx.json(
      'GET',
      `/api/v1/users/${user.id}/effective-policies?datasource_id=${ds.id}`,
    )
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual([])
    const missing = await ctx.json('GET', `/api/v1/users/${user.id}/effective-policies`)
    expect(missing.status).toBe(400)
    const unknown = await ctx.json(
      'GET',
      `/api/v1/users/${user.id}/effective-policies?datasource_id=${MISSING_ID}`,
    )
    expect(unknown.status).toBe(404)
  })

  it("lists a user's direct roles by name, and 404 for an unknown user", async () => {
    const user = await makeUser(ctx)
    const names = [unique('zeta'), unique('alpha')]
    for (const name of names) {
      const { body: role } = await ctx.json('POST', '/api/v1/roles', { body: { name } })
      await ctx.json('POST', `/api/v1/roles/${role.id}/members`, { body: { user_ids: [user.id] } })
    }
    const { status, body } = await ctx.json('GET', `/api/v1/users/${user.id}/roles`)
    expect(status).toBe(200)
    expect(body.map((r: { name: string }) => r.name)).toEqual([...names].sort())
    expect(body[0]).toMatchObject({ is_active: true })
    expect((await ctx.json('GET', `/api/v1/users/${MISSING_ID}/roles`)).status).toBe(404)
  })
})

describe('roles', () => {
  async function role(name = unique('r')) {
    const { status, body, res } = await ctx.json('POST', '/api/v1/roles', { body: { name } })
    expect(status).toBe(201)
    expect(res.headers.get('location')).toBe(`/api/v1/roles/${body.id}`)
    return body
  }

  it('creates, lists, gets and updates roles', async () => {
    const r = await role()
    expect((await ctx.json('GET', `/api/v1/roles/${r.id}`)).body).toMatchObject({
      id: r.id,
      members: [],
      parent_roles: [],
    })
    const list = await ctx.json('GET', `/api/v1/roles?search=${r.name}`)
    expect(list.body.total).toBe(1)
    const upd = await ctx.json('PATCH', `/api/v1/roles/${r.id}`, { body: { description: 'd' } })
    expect(upd.body.description).toBe('d')
  })

  it('rejects a bad role name with 422 and a duplicate with 409', async () => {
    const bad = await ctx.json('POST', '/api/v1/roles', { body: { name: '1xyz' } })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details[0]).toMatchObject({ field: 'name', code: 'pattern' })
    const r = await role()
    const dup = await ctx.json('POST', '/api/v1/roles', { body: { name: r.name } })
    expect(dup.status).toBe(409)
  })

  it('adds and removes members and lists effective members', async () => {
    const r = await role()
    const user = await makeUser(ctx)
    const add = await ctx.call('POST', `/api/v1/roles/${r.id}/members`, {
      body: { user_ids: [user.id] },
    })
    expect(add.status).toBe(204)
    const again = await ctx.json('POST', `/api/v1/roles/${r.id}/members`, {
      body: { user_ids: [user.id] },
    })
    expect(again.status).toBe(409)
    const unknown = await ctx.json('POST', `/api/v1/roles/${r.id}/members`, {
      body: { user_ids: [MISSING_ID] },
    })
    expect(unknown.status).toBe(404)
    const empty = await ctx.json('POST', `/api/v1/roles/${r.id}/members`, {
      body: { user_ids: [] },
    })
    expect(empty.status).toBe(422)
    const eff = await ctx.json('GET', `/api/v1/roles/${r.id}/effective-members`)
    expect(eff.body).toEqual([expect.objectContaining({ user_id: user.id, source: 'direct' })])
    expect((await ctx.call('DELETE', `/api/v1/roles/${r.id}/members/${user.id}`)).status).toBe(204)
    expect((await ctx.call('DELETE', `/api/v1/roles/${r.id}/members/${user.id}`)).status).toBe(404)
  })

  it('links parents, rejects cycles with 422 role_cycle and unlinks', async () => {
    const parent = await role()
    const child = await role()
    const link = await ctx.call('POST', `/api/v1/roles/${child.id}/parents`, {
      body: { parent_role_id: parent.id },
    })
    expect(link.status).toBe(204)
    const cycle = await ctx.json('POST', `/api/v1/roles/${parent.id}/parents`, {
      body: { parent_role_id: child.id },
    })
    expect(cycle.status).toBe(422)
    expect(cycle.body.error.code).toBe('role_cycle')
    const missing = await ctx.json('POST', `/api/v1/roles/${child.id}/parents`, {
      body: { parent_role_id: MISSING_ID },
    })
    expect(missing.status).toBe(404)
    const unlink = await ctx.call('DELETE', `/api/v1/roles/${child.id}/parents/${parent.id}`)
    expect(unlink.status).toBe(204)
  })

  it('previews and returns the impact of a role delete with 200', async () => {
    const r = await role()
    const user = await makeUser(ctx)
    await ctx.store.roles.addMembers(r.id, { user_ids: [user.id] }, ctx.admin.id)
    const impact = await ctx.json('GET', `/api/v1/roles/${r.id}/impact`)
    expect(impact.body).toMatchObject({ role_id: r.id, affected_users: 1 })
    const del = await ctx.json('DELETE', `/api/v1/roles/${r.id}`)
    expect(del.status).toBe(200)
    expect(del.body).toEqual(impact.body)
    expect((await ctx.json('GET', `/api/v1/roles/${r.id}`)).status).toBe(404)
  })
})
