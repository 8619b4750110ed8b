import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { IdentityProvider, Store, User } from '../../src/index.js'
import { rowsOf } from '../../src/kernel/db.js'
import { auditOf, bootstrapAdmin, expectNoAudit, unique } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

async function memberships(store: Store, userId: string): Promise<string[]> {
  const rows = await rowsOf<{ role_id: string }>(
    store.db.execute(sql`SELECT role_id FROM role_members WHERE user_id = ${userId}`),
  )
  return rows.map((r) => r.role_id).sort()
}

/** Identity providers (docs/sso.md): the resource, and signing in with verified claims. */
export function identityProvidersCases(makeStore: MakeStore): void {
  describe('identity providers', () => {
    let store: Store
    let admin: User
    let tenantKey: string
    let analysts: string
    let auditors: string
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
      tenantKey = unique('tenant')
      await store.attributes.create(
        { key: tenantKey, entity_type: 'user', value_type: 'integer' },
        admin.id,
      )
      analysts = (await store.roles.create({ name: unique('analysts') }, admin.id)).id
      auditors = (await store.roles.create({ name: unique('auditors') }, admin.id)).id
    })
    afterAll(() => store.close())

    const create = (extra: Record<string, unknown> = {}): Promise<IdentityProvider> =>
      store.identityProviders.create(
        {
          name: unique('idp'),
          issuer: `https://${unique('id')}.example.com/realms/acme`,
          client_id: 'palisade',
          client_secret: 'Top-Secret-42',
          attribute_mappings: [{ claim: 'org_id', attribute: tenantKey }],
          role_mappings: [
            { value: 'analysts', role_id: analysts },
            { value: 'auditors', role_id: auditors },
          ],
          jit_users: true,
          ...extra,
        },
        admin.id,
      )

    it('creates a provider with defaults, never returning or auditing the client secret', async () => {
      const idp = await create()
      expect(idp).toMatchObject({
        client_secret_set: true,
        audiences: [],
        username_claim: null,
        role_claim: 'groups',
        jit_users: true,
        is_active: true,
      })
      expect(JSON.stringify(idp)).not.toContain('Top-Secret-42')
      const [entry] = await auditOf(store, idp.id)
      expect(entry).toMatchObject({ resource_type: 'identity_provider', action: 'create' })
      expect(JSON.stringify(entry)).not.toContain('Top-Secret-42')
      const rows = await rowsOf<{ secret: string }>(
        store.db.execute(sql`SELECT secret FROM identity_providers WHERE id = ${idp.id}`),
      )
      expect(rows[0]?.secret).toMatch(/^v1:/)
    })

    it('refuses unknown attributes, unknown roles and a plain-http issuer with 422', async () => {
      const scheme = await expectNoAudit(store, () => create({ issuer: 'http://idp.example.com' }))
      expect(scheme.details.map((d) => [d.field, d.code])).toEqual([['issuer', 'pattern']])
      const error = await expectNoAudit(store, () =>
        create({
          attribute_mappings: [{ claim: 'org', attribute: 'nope' }],
          role_mappings: [{ value: 'x', role_id: '0190f000-0000-7000-8000-000000000999' }],
        }),
      )
      expect(error.code).toBe('validation_failed')
      expect(error.details.map((d) => [d.field, d.code])).toEqual([
        ['attribute_mappings[0].attribute', 'unknown_attribute'],
        ['role_mappings[0].role_id', 'not_found'],
      ])
    })

    it('accepts plain http on a loopback issuer and refuses a second provider with the same issuer', async () => {
      const issuer = `http://127.0.0.1:${Math.floor(Math.random() * 50000) + 1024}`
      await create({ issuer })
      expect((await expectNoAudit(store, () => create({ issuer }))).code).toBe('already_exists')
    })

    it('keeps the secret on an empty string and flags a changed secret without its value', async () => {
      const idp = await create()
      const same = await store.identityProviders.update(idp.id, { client_secret: '' }, admin.id)
      expect(same.updated_at).toBe(idp.updated_at)
      await store.identityProviders.update(idp.id, { client_secret: 'Other-Secret-7' }, admin.id)
      const [entry] = await auditOf(store, idp.id)
      expect(entry?.changes).toEqual({ before: {}, after: {}, client_secret_changed: true })
      const cleared = await store.identityProviders.update(
        idp.id,
        { client_secret: null },
        admin.id,
      )
      expect(cleared.client_secret_set).toBe(false)
    })

    it('provisions a user at first login with typed attributes and mapped roles, audited', async () => {
      const idp = await create()
      const username = unique('jit')
      const claims = {
        sub: unique('sub'),
        preferred_username: username,
        org_id: '7',
        groups: ['analysts', 'other'],
      }
      const first = await store.identityProviders.signIn(idp, username, claims)
      expect(first.refusal).toBeNull()
      const userId = first.userId as string
      const user = await store.users.get(userId)
      expect(user).toMatchObject({ username, is_admin: false, attributes: { [tenantKey]: 7 } })
      expect(await memberships(store, userId)).toEqual([analysts])
      const actions = (await auditOf(store, userId)).map((e) => e.action)
      expect(actions).toEqual(expect.arrayContaining(['create', 'update']))
      // The same claims again change nothing and audit nothing.
      const before = await store.audit.admin.count()
      expect((await store.identityProviders.signIn(idp, username, claims)).userId).toBe(userId)
      expect(await store.audit.admin.count()).toBe(before)
      // New groups and tenant: roles follow the claim, the attribute too.
      await store.identityProviders.signIn(idp, username, {
        ...claims,
        org_id: 8,
        groups: 'auditors',
      })
      expect(await memberships(store, userId)).toEqual([auditors])
      expect((await store.users.get(userId)).attributes).toEqual({ [tenantKey]: 8 })
      const removed = (await auditOf(store, analysts)).find((e) => e.action === 'remove_member')
      expect(removed?.changes).toMatchObject({ user_id: userId, identity_provider_id: idp.id })
    })

    it('leaves a membership an admin granted when the claim no longer has the group', async () => {
      const idp = await create()
      const username = unique('kept')
      const claims = { sub: unique('sub'), preferred_username: username, groups: [] as string[] }
      const { userId } = await store.identityProviders.signIn(idp, username, claims)
      await store.roles.addMembers(analysts, { user_ids: [userId as string] }, admin.id)
      await store.identityProviders.signIn(idp, username, claims)
      expect(await memberships(store, userId as string)).toEqual([analysts])
    })

    it('refuses mismatched, unknown, admin and malformed identities with a reason', async () => {
      const jit = await create()
      const strict = await create({ jit_users: false })
      const name = unique('who')
      const sub = unique('sub')
      const refusal = async (
        idp: IdentityProvider,
        user: string,
        claims: Record<string, unknown>,
      ) => (await store.identityProviders.signIn(idp, user, claims)).refusal
      expect(await refusal(jit, name, { sub, preferred_username: 'someone-else' })).toBe(
        'username_mismatch',
      )
      expect(await refusal(jit, name, { preferred_username: name })).toBe('missing_subject')
      expect(await refusal(jit, name, { preferred_username: 42 })).toBe('missing_username_claim')
      expect(await refusal(strict, name, { sub, preferred_username: name })).toBe('unknown_user')
      expect(await refusal(jit, 'a@b', { sub, preferred_username: 'a@b' })).toBe('invalid_username')
      expect(await refusal(jit, name, { sub, preferred_username: name, org_id: 'x' })).toBe(
        'invalid_claim',
      )
      expect(await refusal(jit, admin.username, { sub, preferred_username: admin.username })).toBe(
        'identity_mismatch',
      )
      expect(await refusal(jit, name, { sub, preferred_username: name })).toBeNull()
      expect(await refusal(jit, name, { sub: unique('sub'), preferred_username: name })).toBe(
        'identity_mismatch',
      )
      expect(await refusal(strict, name, { sub, preferred_username: name })).toBe(
        'identity_mismatch',
      )
    })

    it('keeps a console sign-in for one use, with its verifier sealed at rest', async () => {
      const idp = await create()
      const pending = {
        identityProviderId: idp.id,
        nonce: 'nonce-1',
        codeVerifier: 'verifier-that-must-be-sealed',
        redirectUri: 'https://palisade.example.com/ui',
      }
      await store.ssoSignIns.begin('state-one', pending, 60_000)
      const stored = await rowsOf<{ code_verifier: string; state_hash: string }>(
        store.db.execute(sql`SELECT code_verifier, state_hash FROM sso_sign_ins`),
      )
      expect(JSON.stringify(stored)).not.toContain('verifier-that-must-be-sealed')
      expect(JSON.stringify(stored)).not.toContain('state-one')
      expect(await store.ssoSignIns.consume('state-one')).toEqual({ status: 'ok', pending })
      expect(await store.ssoSignIns.consume('state-one')).toEqual({ status: 'unknown' })
      await store.ssoSignIns.begin('state-two', pending, -1)
      expect(await store.ssoSignIns.consume('state-two')).toEqual({ status: 'expired' })
    })

    it('makes an admin from the admin claim only, and demotes one it made when the claim goes', async () => {
      const idp = await create({
        jit_users: true,
        console_sign_in: true,
        admin_claim: { claim: 'roles', value: 'palisade-admin' },
      })
      const name = unique('ops')
      const claims = { sub: `sub-${name}`, preferred_username: name, roles: ['palisade-admin'] }
      const none = await store.identityProviders.adminSignIn(idp, { ...claims, roles: ['x'] })
      expect(none).toEqual({ userId: null, refusal: 'admin_claim_missing' })
      expect(await store.users.findByUsername(name)).toBeNull()
      const made = await store.identityProviders.adminSignIn(idp, claims)
      expect(made.refusal).toBeNull()
      expect((await store.users.get(made.userId as string)).is_admin).toBe(true)
      expect(await store.identityProviders.links.get(made.userId as string)).toMatchObject({
        identity_provider_id: idp.id,
        subject: claims.sub,
        admin_granted: true,
      })
      const lost = await store.identityProviders.adminSignIn(idp, { ...claims, roles: [] })
      expect(lost.refusal).toBe('admin_claim_missing')
      expect((await store.users.get(made.userId as string)).is_admin).toBe(false)
      // A local admin of another name is never taken over, whatever the claims say.
      const local = await store.identityProviders.adminSignIn(idp, {
        ...claims,
        sub: 'someone-new',
        preferred_username: admin.username,
      })
      expect(local.refusal).toBe('identity_mismatch')
    })

    it('refuses console sign-in without an admin claim', async () => {
      await expect(create({ console_sign_in: true })).rejects.toMatchObject({
        details: [expect.objectContaining({ field: 'admin_claim', code: 'required' })],
      })
    })

    it('deletes a provider with the memberships it granted, each audited', async () => {
      const idp = await create()
      const username = unique('gone')
      const { userId } = await store.identityProviders.signIn(idp, username, {
        sub: unique('sub'),
        preferred_username: username,
        groups: ['analysts'],
      })
      await store.identityProviders.delete(idp.id, admin.id)
      expect(await memberships(store, userId as string)).toEqual([])
      expect((await auditOf(store, idp.id))[0]?.action).toBe('delete')
      await expect(store.identityProviders.get(idp.id)).rejects.toMatchObject({ code: 'not_found' })
    })
  })
}
