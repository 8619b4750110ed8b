import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

const body = (extra: Record<string, unknown> = {}) => ({
  name: unique('idp'),
  issuer: `https://${unique('sso')}.example.com/realms/acme`,
  client_id: 'palisade',
  client_secret: 'Client-Secret-99',
  audiences: ['palisade', 'account'],
  ...extra,
})

describe('identity providers', () => {
  it('creates a provider without ever returning or auditing the client secret', async () => {
    const res = await ctx.call('POST', '/api/v1/identity-providers', { body: body() })
    expect(res.status).toBe(201)
    const idp = (await res.json()) as any
    expect(res.headers.get('location')).toBe(`/api/v1/identity-providers/${idp.id}`)
    expect(idp).toMatchObject({ client_secret_set: true, role_claim: 'groups', jit_users: false })
    expect(JSON.stringify(idp)).not.toContain('Client-Secret-99')
    const got = await ctx.json('GET', `/api/v1/identity-providers/${idp.id}`)
    expect(JSON.stringify(got.body)).not.toContain('Client-Secret-99')
    const audit = await ctx.json('GET', `/api/v1/audit/admin?resource_id=${idp.id}`)
    expect(audit.body.data[0]).toMatchObject({
      resource_type: 'identity_provider',
      action: 'create',
    })
    expect(JSON.stringify(audit.body)).not.toContain('Client-Secret-99')
  })

  it('answers 422 for bad fields and unknown mapped attributes, 409 for a taken issuer', async () => {
    const bad = await ctx.json('POST', '/api/v1/identity-providers', {
      body: { name: '1x', issuer: 'ftp://idp', client_id: '', audiences: 'x', jit_users: 'yes' },
    })
    expect(bad.status).toBe(422)
    const fields = bad.body.error.details.map((d: { field: string }) => d.field)
    expect(fields).toEqual(
      expect.arrayContaining(['name', 'issuer', 'client_id', 'audiences', 'jit_users']),
    )
    const unknown = await ctx.json('POST', '/api/v1/identity-providers', {
      body: body({ attribute_mappings: [{ claim: 'org_id', attribute: unique('nokey') }] }),
    })
    expect(unknown.status).toBe(422)
    expect(unknown.body.error.details[0]).toMatchObject({
      field: 'attribute_mappings[0].attribute',
      code: 'unknown_attribute',
    })
    const first = body()
    expect((await ctx.json('POST', '/api/v1/identity-providers', { body: first })).status).toBe(201)
    const dup = await ctx.json('POST', '/api/v1/identity-providers', {
      body: body({ issuer: first.issuer }),
    })
    expect(dup.status).toBe(409)
  })

  it('updates, lists with paging and deletes a provider', async () => {
    const created = await ctx.json('POST', '/api/v1/identity-providers', { body: body() })
    const id = created.body.id
    const put = await ctx.json('PUT', `/api/v1/identity-providers/${id}`, {
      body: { jit_users: true, username_claim: 'email', client_secret: '' },
    })
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({
      jit_users: true,
      username_claim: 'email',
      client_secret_set: true,
    })
    const list = await ctx.json('GET', '/api/v1/identity-providers?page_size=1')
    expect(list.body).toMatchObject({ page: 1, page_size: 1 })
    expect(list.body.total).toBeGreaterThanOrEqual(1)
    expect(list.body.data).toHaveLength(1)
    expect((await ctx.call('DELETE', `/api/v1/identity-providers/${id}`)).status).toBe(204)
    expect((await ctx.json('GET', `/api/v1/identity-providers/${id}`)).status).toBe(404)
    expect(
      (await ctx.json('PUT', `/api/v1/identity-providers/${MISSING_ID}`, { body: {} })).status,
    ).toBe(404)
  })

  it('describes the routes in the OpenAPI document', async () => {
    const { body: doc } = await ctx.json('GET', '/api/v1/openapi.json', { token: null })
    expect(Object.keys(doc.paths['/api/v1/identity-providers'])).toEqual(['get', 'post'])
    expect(doc.paths['/api/v1/identity-providers/{id}']).toHaveProperty('delete')
  })
})
