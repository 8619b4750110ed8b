import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, PASSWORD, setup, type TestContext } from './helpers.js'

let ctx: TestContext
let roleId: string
let dsId: string
let dana: { id: string; username: string }
let erin: { id: string; username: string }

const basic = (username: string, password = PASSWORD) => ({
  token: null,
  headers: { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
})

beforeAll(async () => {
  ctx = await setup()
  roleId = (await ctx.json('POST', '/api/v1/roles', { body: { name: 'oncall' } })).body.id
  dsId = (
    await ctx.json('POST', '/api/v1/datasources', {
      body: { name: 'warehouse', ds_type: 'pglite', config: {} },
    })
  ).body.id
  for (const name of ['dana', 'erin']) {
    const { body } = await ctx.json('POST', '/api/v1/users', {
      body: { username: name, password: PASSWORD },
    })
    if (name === 'dana') dana = body
    else erin = body
  }
})
afterAll(() => ctx.close())

describe('access requests in the admin API', () => {
  it('lets a user ask with their own credentials and an admin approve for less time', async () => {
    const asked = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('dana'),
      body: { role_id: roleId, duration_seconds: 7200, reason: 'incident 7' },
    })
    expect(asked.status).toBe(201)
    expect(asked.res.headers.get('Location')).toBe(`/api/v1/access-requests/${asked.body.id}`)
    expect(asked.body).toMatchObject({ status: 'pending', user_id: dana.id, role_name: 'oncall' })

    // The requester reads it; another user gets a 404, not someone else's request.
    expect(
      (await ctx.json('GET', `/api/v1/access-requests/${asked.body.id}`, basic('dana'))).status,
    ).toBe(200)
    expect(
      (await ctx.json('GET', `/api/v1/access-requests/${asked.body.id}`, basic('erin'))).status,
    ).toBe(404)
    // A user cannot approve, even their own request, nor reach any other admin route.
    const selfApprove = await ctx.json('POST', `/api/v1/access-requests/${asked.body.id}/approve`, {
      ...basic('dana'),
      body: {},
    })
    expect([selfApprove.status, selfApprove.body.error.code]).toEqual([403, 'admin_required'])
    expect((await ctx.json('GET', '/api/v1/users', basic('dana'))).status).toBe(401)

    const pending = await ctx.json('GET', '/api/v1/access-requests?status=pending')
    expect(pending.body.data.map((r: { id: string }) => r.id)).toContain(asked.body.id)

    const approved = await ctx.json('POST', `/api/v1/access-requests/${asked.body.id}/approve`, {
      body: { duration_seconds: 3600, comment: 'one hour' },
    })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: ctx.admin.id })
    const role = await ctx.json('GET', `/api/v1/roles/${roleId}`)
    expect(role.body.members).toEqual([
      { id: dana.id, username: 'dana', valid_from: null, valid_until: approved.body.granted_until },
    ])
    const until = Date.parse(approved.body.granted_until)
    expect(until - Date.now()).toBeGreaterThan(3500_000)
    expect(until - Date.now()).toBeLessThanOrEqual(3600_000)

    const again = await ctx.json('POST', `/api/v1/access-requests/${asked.body.id}/deny`, {
      body: {},
    })
    expect([again.status, again.body.error.code]).toEqual([409, 'not_pending'])
    const audit = await ctx.json(
      'GET',
      `/api/v1/audit/admin?resource_type=access_request&action=approve`,
    )
    expect(audit.body.data[0]).toMatchObject({ resource_id: asked.body.id, actor_id: ctx.admin.id })
  })

  it('refuses wrong credentials like the login does, and bad bodies with field details', async () => {
    const wrong = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('dana', 'not-the-password'),
      body: { role_id: roleId, duration_seconds: 60, reason: 'x' },
    })
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_credentials'])
    const short = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { datasource_id: dsId, duration_seconds: 5, reason: '' },
    })
    expect(short.status).toBe(422)
    expect(short.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'duration_seconds',
      'reason',
    ])
    const missing = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { datasource_id: MISSING_ID, duration_seconds: 60, reason: 'x' },
    })
    expect(missing.status).toBe(404)
  })

  it('takes the duration as ISO 8601 too', async () => {
    const asked = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { role_id: roleId, duration: 'PT2H', reason: 'on call' },
    })
    expect([asked.status, asked.body.duration_seconds]).toEqual([201, 7200])
    const approved = await ctx.json('POST', `/api/v1/access-requests/${asked.body.id}/approve`, {
      body: { duration: 'PT30M' },
    })
    const left = Date.parse(approved.body.granted_until) - Date.now()
    expect(left).toBeGreaterThan(1700_000)
    expect(left).toBeLessThanOrEqual(1800_000)
    const bad = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { role_id: roleId, duration: 'P1Y', reason: 'a year' },
    })
    expect([bad.status, bad.body.error.details[0].field]).toEqual([422, 'duration'])
    const none = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { role_id: roleId, reason: 'forever' },
    })
    expect([none.status, none.body.error.details[0].field]).toEqual([422, 'duration_seconds'])
    await ctx.store.roles.removeMember(roleId, erin.id, ctx.admin.id)
  })

  it('lets the requester cancel, an admin deny, and lists only a user’s own requests', async () => {
    const first = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { datasource_id: dsId, duration_seconds: 600, reason: 'quarterly report' },
    })
    const denied = await ctx.json('POST', `/api/v1/access-requests/${first.body.id}/deny`, {
      body: { comment: 'use the dashboard' },
    })
    expect(denied.body).toMatchObject({ status: 'denied', decision_comment: 'use the dashboard' })
    const access = await ctx.json('GET', `/api/v1/datasources/${dsId}/users`)
    expect(access.body).toEqual([])

    const second = await ctx.json('POST', '/api/v1/access-requests', {
      ...basic('erin'),
      body: { datasource_id: dsId, duration_seconds: 600, reason: 'again' },
    })
    const cancelled = await ctx.json(
      'POST',
      `/api/v1/access-requests/${second.body.id}/cancel`,
      basic('erin'),
    )
    expect(cancelled.body.status).toBe('cancelled')
    const mine = await ctx.json('GET', `/api/v1/access-requests?user_id=${dana.id}`, basic('erin'))
    expect(mine.body.data.every((r: { user_id: string }) => r.user_id === erin.id)).toBe(true)
    expect(mine.body.total).toBe(3)
  })

  it('grants one user time-bound access and shows the window; past windows are refused', async () => {
    const until = new Date(Date.now() + 3600_000).toISOString()
    const put = await ctx.call('PUT', `/api/v1/datasources/${dsId}/users/${erin.id}`, {
      body: { valid_until: until },
    })
    expect(put.status).toBe(204)
    const users = await ctx.json('GET', `/api/v1/datasources/${dsId}/users`)
    expect(
      users.body.map((u: { id: string; valid_until: string }) => [u.id, u.valid_until]),
    ).toEqual([[erin.id, until]])
    const past = await ctx.json('PUT', `/api/v1/roles/${roleId}/members/${erin.id}`, {
      body: { valid_until: '2001-01-01T00:00:00Z' },
    })
    expect([past.status, past.body.error.details[0].field]).toEqual([422, 'valid_until'])
    const revoke = await ctx.call('DELETE', `/api/v1/datasources/${dsId}/users/${erin.id}`)
    expect(revoke.status).toBe(204)
    expect((await ctx.json('GET', `/api/v1/datasources/${dsId}/users`)).body).toEqual([])
  })

  it('documents the routes and both ways to authenticate in the OpenAPI document', async () => {
    const { body } = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/access-requests',
        '/api/v1/access-requests/{id}/approve',
        '/api/v1/roles/{id}/members/{user_id}',
      ]),
    )
    expect(body.paths['/api/v1/access-requests'].post.security).toEqual([
      { bearerAuth: [] },
      { basicAuth: [] },
    ])
    const assign = body.paths['/api/v1/datasources/{id}/policies'].post.requestBody
    expect(Object.keys(assign.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['valid_from', 'valid_until']),
    )
  })
})
