import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { setup, type TestContext } from './helpers.js'

/**
 * Identity providers in policy bundles (docs/policy-as-code.md): exported by name with their
 * mappings and roles by name, never with the client secret; applying creates and updates them,
 * keeps the stored secret, and is idempotent.
 */
const SECRET = 'Provider-Secret-never-exported-42'

let source: TestContext
let target: TestContext

const exportJson = async (ctx: TestContext) =>
  (await ctx.json('GET', '/api/v1/policy-bundles?format=json')).body
const apply = (ctx: TestContext, bundle: unknown, dryRun = false) =>
  ctx.json('POST', '/api/v1/policy-bundles', { body: { bundle, dry_run: dryRun } })

async function seed(ctx: TestContext) {
  await ctx.json('POST', '/api/v1/attribute-definitions', {
    body: { key: 'tenant', entity_type: 'user', value_type: 'string' },
  })
  const role = await ctx.json('POST', '/api/v1/roles', { body: { name: 'analysts' } })
  return role.body.id as string
}

beforeAll(async () => {
  ;[source, target] = await Promise.all([setup(), setup()])
  const roleId = await seed(source)
  await seed(target)
  const created = await source.json('POST', '/api/v1/identity-providers', {
    body: {
      name: 'acme',
      issuer: 'https://sso.example.com/realms/acme',
      client_id: 'palisade',
      client_secret: SECRET,
      audiences: ['palisade', 'account'],
      attribute_mappings: [{ claim: 'org_id', attribute: 'tenant' }],
      role_mappings: [{ value: 'analysts', role_id: roleId }],
      jit_users: true,
      console_sign_in: true,
      admin_claim: { claim: 'groups', value: 'palisade-admins' },
    },
  })
  expect(created.status).toBe(201)
})
afterAll(async () => {
  for (const ctx of [source, target]) await ctx?.close()
})

describe('identity providers in policy bundles', () => {
  it('exports a provider with roles by name and without its client secret', async () => {
    const bundle = await exportJson(source)
    expect(bundle.identity_providers).toEqual([
      {
        name: 'acme',
        issuer: 'https://sso.example.com/realms/acme',
        client_id: 'palisade',
        audiences: ['account', 'palisade'],
        username_claim: null,
        role_claim: 'groups',
        attribute_mappings: [{ claim: 'org_id', attribute: 'tenant' }],
        role_mappings: [{ value: 'analysts', role: 'analysts' }],
        jit_users: true,
        is_active: true,
        console_sign_in: true,
        admin_claim: { claim: 'groups', value: 'palisade-admins' },
      },
    ])
    const yaml = await (await source.call('GET', '/api/v1/policy-bundles')).text()
    for (const text of [JSON.stringify(bundle), yaml]) {
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain('client_secret')
    }
    expect(parse(yaml).identity_providers).toEqual(bundle.identity_providers)
  })

  it('re-applies its own export without a step', async () => {
    const plan = await apply(source, await exportJson(source))
    expect(plan.status).toBe(200)
    expect(plan.body.steps).toEqual([])
  })

  it('creates the provider in another store, its role mapped by name, without a secret', async () => {
    const bundle = await exportJson(source)
    const dry = await apply(target, bundle, true)
    expect(dry.body.steps).toContainEqual({
      action: 'create',
      kind: 'identity_provider',
      name: 'acme',
    })
    expect((await target.json('GET', '/api/v1/identity-providers')).body.total).toBe(0)
    const plan = await apply(target, bundle)
    expect(plan.status).toBe(200)
    const [created] = (await target.json('GET', '/api/v1/identity-providers')).body.data
    const analysts = (await target.json('GET', '/api/v1/roles?search=analysts')).body.data[0]
    expect(created).toMatchObject({
      name: 'acme',
      client_secret_set: false,
      role_mappings: [{ value: 'analysts', role_id: analysts.id }],
      admin_claim: { claim: 'groups', value: 'palisade-admins' },
    })
    expect((await apply(target, bundle)).body.steps).toEqual([])
  })

  it('updates only the fields that differ and keeps the stored client secret', async () => {
    const bundle = await exportJson(source)
    bundle.identity_providers[0].jit_users = false
    bundle.identity_providers[0].admin_claim = { claim: 'roles', value: 'admin' }
    const plan = await apply(source, bundle)
    expect(plan.status).toBe(200)
    expect(plan.body.steps).toEqual([
      {
        action: 'update',
        kind: 'identity_provider',
        name: 'acme',
        fields: ['jit_users', 'admin_claim'],
      },
    ])
    const [provider] = (await source.json('GET', '/api/v1/identity-providers')).body.data
    expect(provider).toMatchObject({ jit_users: false, client_secret_set: true })
    expect(await source.store.identityProviders.clientSecretOf(provider.id)).toBe(SECRET)
  })

  it('fills defaults of a hand-written provider and refuses an unknown role by its path', async () => {
    const bundle = await exportJson(target)
    bundle.identity_providers.push({
      name: 'minimal',
      issuer: 'https://login.example.org',
      client_id: 'palisade',
    })
    const plan = await apply(target, bundle)
    expect(plan.status).toBe(200)
    const minimal = (await target.json('GET', '/api/v1/identity-providers?search=minimal')).body
      .data[0]
    expect(minimal).toMatchObject({ role_claim: 'groups', jit_users: false, is_active: true })
    expect((await apply(target, bundle)).body.steps).toEqual([])
    bundle.identity_providers[0].role_mappings = [{ value: 'x', role: 'no-such-role' }]
    const bad = await apply(target, bundle)
    expect(bad.status).toBe(422)
    expect(bad.body.error.details[0]).toMatchObject({
      field: 'identity_providers[acme].role_mappings',
      code: 'not_found',
    })
  })

  it('leaves a provider the bundle does not list in place', async () => {
    const bundle = await exportJson(target)
    bundle.identity_providers = []
    const plan = await apply(target, bundle)
    expect(plan.status).toBe(200)
    expect(plan.body.steps).toEqual([])
    expect((await target.json('GET', '/api/v1/identity-providers')).body.total).toBe(2)
  })
})
