import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store, User } from '../../src/index.js'
import {
  auditOf,
  bootstrapAdmin,
  captureChanges,
  expectNoAudit,
  PASSWORD,
  unique,
} from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const pgConfig = {
  host: 'db.internal',
  database: 'shop',
  username: 'reader',
  password: 'S3cret!pw',
}

/** Datasources, sealed secrets and access lists (docs/resources.md#datasources and 8). */
export function datasourcesCases(makeStore: MakeStore): void {
  describe('datasources and access', () => {
    let store: Store
    let admin: User
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
    })
    afterAll(() => store.close())

    it('creates a datasource with defaults, never returning or auditing the password', async () => {
      const ds = await store.datasources.create(
        { name: unique('shop'), ds_type: 'postgres', config: pgConfig },
        admin.id,
      )
      expect(ds).toMatchObject({
        access_mode: 'policy_required',
        is_active: true,
        statement_timeout_ms: 0,
        pool_size: 10,
        config: { host: 'db.internal', port: 5432, sslmode: 'prefer', password_set: true },
      })
      expect(ds.config).not.toHaveProperty('password')
      const [entry] = await auditOf(store, ds.id)
      expect(Object.keys(entry?.changes.after).sort()).toEqual([
        'access_mode',
        'ds_type',
        'is_active',
        'name',
        'pool_size',
        'statement_timeout_ms',
      ])
      expect(JSON.stringify(entry)).not.toContain('S3cret')
    })

    it('encrypts the password at rest and decrypts it for upstream connections', async () => {
      const ds = await store.datasources.create(
        { name: unique('enc'), ds_type: 'postgres', config: pgConfig },
        admin.id,
      )
      const rows = (await store.db.execute(
        sql`SELECT secret, config::text AS config FROM datasources WHERE id = ${ds.id}`,
      )) as unknown as {
        rows: { secret: string; config: string }[]
      }
      expect(rows.rows[0]?.secret).toMatch(/^v1:/)
      expect(JSON.stringify(rows.rows)).not.toContain('S3cret')
      expect(await passwordOf(store, ds.id)).toBe('S3cret!pw')
    })

    it('merges config key by key and flags config_changed without values', async () => {
      const ds = await store.datasources.create(
        { name: unique('merge'), ds_type: 'postgres', config: pgConfig },
        admin.id,
      )
      const keep = await store.datasources.update(
        ds.id,
        { config: { host: 'other', password: '' } },
        admin.id,
      )
      expect(keep.config).toMatchObject({ host: 'other', database: 'shop', password_set: true })
      expect(await passwordOf(store, ds.id)).toBe('S3cret!pw')
      const [entry] = await auditOf(store, ds.id)
      expect(entry?.changes).toEqual({ before: {}, after: {}, config_changed: true })
      await store.datasources.update(ds.id, { config: { password: 'N3w!pw' } }, admin.id)
      expect(await passwordOf(store, ds.id)).toBe('N3w!pw')
      const cleared = await store.datasources.update(
        ds.id,
        { config: { password: null } },
        admin.id,
      )
      expect(cleared.config['password_set']).toBe(false)
    })

    it('invalidates ds(D) when name, access mode or activity change', async () => {
      const ds = await store.datasources.create(
        { name: unique('inv'), ds_type: 'pglite', config: { init_sql: 'select 1' } },
        admin.id,
      )
      expect(ds.config).toEqual({ data_dir: null, init_sql: 'select 1' })
      const events = await captureChanges(store, () =>
        store.datasources.update(ds.id, { access_mode: 'open' }, admin.id),
      )
      expect(events).toEqual([{ type: 'ds', datasourceId: ds.id, origin: 'local' }])
      const [entry] = await auditOf(store, ds.id)
      expect(entry?.changes).toEqual({
        before: { access_mode: 'policy_required' },
        after: { access_mode: 'open' },
      })
      const none = await captureChanges(store, () =>
        store.datasources.update(ds.id, { pool_size: 3 }, admin.id),
      )
      expect(none).toEqual([])
    })

    it.each([
      ['a bad name', { name: '9lives' }, 'name'],
      ['an unknown type', { ds_type: 'mysql' }, 'ds_type'],
      ['a missing host', { config: { database: 'd', username: 'u' } }, 'config.host'],
      ['a bad port', { config: { ...pgConfig, port: 70000 } }, 'config.port'],
      ['a bad sslmode', { config: { ...pgConfig, sslmode: 'maybe' } }, 'config.sslmode'],
      ['a pool too large', { pool_size: 500 }, 'pool_size'],
      ['a negative timeout', { statement_timeout_ms: -1 }, 'statement_timeout_ms'],
    ])('rejects %s with 422 and writes nothing', async (_n, patch, field) => {
      const error = await expectNoAudit(store, () =>
        store.datasources.create(
          { name: unique('bad'), ds_type: 'postgres', config: pgConfig, ...patch } as never,
          admin.id,
        ),
      )
      expect([error.status, error.code]).toEqual([422, 'validation_failed'])
      expect(error.details.map((d) => d.field)).toContain(field)
    })

    it('rejects a duplicate name with 409', async () => {
      const name = unique('dup')
      await store.datasources.create({ name, ds_type: 'pglite', config: {} }, admin.id)
      const error = await expectNoAudit(store, () =>
        store.datasources.create({ name, ds_type: 'pglite', config: {} }, admin.id),
      )
      expect(error.code).toBe('already_exists')
    })

    it('replaces the user access list with a sorted before/after audit and ds(D, U) events', async () => {
      const ds = await store.datasources.create(
        { name: unique('acc'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const u1 = await store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)
      const u2 = await store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)
      await store.access.setUsers(ds.id, { user_ids: [u1.id] }, admin.id)
      const events = await captureChanges(store, () =>
        store.access.setUsers(ds.id, { user_ids: [u2.id, u2.id] }, admin.id),
      )
      expect(events).toEqual([
        { type: 'ds_users', datasourceId: ds.id, userIds: [u1.id, u2.id].sort(), origin: 'local' },
      ])
      const [entry] = await auditOf(store, ds.id)
      expect(entry?.changes).toEqual({ field: 'user_access', before: [u1.id], after: [u2.id] })
      const before = await store.audit.admin.count()
      await store.access.setUsers(ds.id, { user_ids: [u2.id] }, admin.id)
      expect(await store.audit.admin.count()).toBe(before)
      const missing = await expectNoAudit(store, () =>
        store.access.setUsers(
          ds.id,
          { user_ids: [u1.id, '0190f000-0000-7000-8000-000000000003'] },
          admin.id,
        ),
      )
      expect([missing.status, missing.details]).toEqual([
        404,
        [expect.objectContaining({ field: 'user_ids[1]', code: 'not_found' })],
      ])
      const bad = await expectNoAudit(store, () =>
        store.access.setUsers(ds.id, { user_ids: ['nope'] }, admin.id),
      )
      expect(bad.status).toBe(422)
    })

    it('rejects a role list naming an inactive role with 400 before writing anything', async () => {
      const ds = await store.datasources.create(
        { name: unique('roles'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const active = await store.roles.create({ name: unique('act') }, admin.id)
      const inactive = await store.roles.create({ name: unique('ina'), is_active: false }, admin.id)
      const error = await expectNoAudit(store, () =>
        store.access.setRoles(ds.id, { role_ids: [active.id, inactive.id] }, admin.id),
      )
      expect([error.status, error.code]).toEqual([400, 'inactive_role'])
      expect(error.details).toEqual([expect.objectContaining({ field: 'role_ids[1]' })])
      expect(await store.access.listRoles(ds.id)).toEqual([])
      const user = await store.users.create(
        { username: unique('mem'), password: PASSWORD },
        admin.id,
      )
      await store.roles.addMembers(active.id, { user_ids: [user.id] }, admin.id)
      const events = await captureChanges(store, () =>
        store.access.setRoles(ds.id, { role_ids: [active.id] }, admin.id),
      )
      expect(events).toEqual([
        { type: 'ds_users', datasourceId: ds.id, userIds: [user.id], origin: 'local' },
      ])
      const [entry] = await auditOf(store, ds.id)
      expect(entry?.changes).toEqual({ field: 'role_access', before: [], after: [active.id] })
      expect(await store.access.get(ds.id)).toMatchObject({
        all: false,
        users: [],
        roles: [{ id: active.id }],
      })
    })

    it('grants and revokes all-scope access as data_source_access entries', async () => {
      const ds = await store.datasources.create(
        { name: unique('all'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      const events = await captureChanges(store, () =>
        store.access.setAll(ds.id, { enabled: true }, admin.id),
      )
      expect(events).toEqual([{ type: 'ds', datasourceId: ds.id, origin: 'local' }])
      await store.access.setAll(ds.id, { enabled: false }, admin.id)
      const entries = await auditOf(store, ds.id)
      expect(entries.slice(0, 2).map((e) => [e.resource_type, e.action, e.changes])).toEqual([
        ['data_source_access', 'revoke_access', { datasource_id: ds.id, scope: 'all' }],
        ['data_source_access', 'grant_access', { datasource_id: ds.id, scope: 'all' }],
      ])
      const bad = await expectNoAudit(store, () =>
        store.access.setAll(ds.id, { enabled: 'yes' } as never, admin.id),
      )
      expect(bad.status).toBe(422)
    })

    it('answers 404 for access calls on an unknown datasource', async () => {
      const id = '0190f000-0000-7000-8000-000000000004'
      for (const call of [
        () => store.access.setUsers(id, { user_ids: [] }, admin.id),
        () => store.access.setRoles(id, { role_ids: [] }, admin.id),
        () => store.access.setAll(id, { enabled: true }, admin.id),
        () => store.datasources.delete(id, admin.id),
      ]) {
        expect((await expectNoAudit(store, call)).status).toBe(404)
      }
    })
  })

  describe('attribute definitions', () => {
    let store: Store
    let admin: User
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
    })
    afterAll(() => store.close())

    it.each(['id', 'username', 'user_id', 'roles'])(
      'rejects the reserved user key %s with detail code reserved',
      async (key) => {
        const error = await expectNoAudit(store, () =>
          store.attributes.create({ key, entity_type: 'user', value_type: 'string' }, admin.id),
        )
        expect([error.status, error.details[0]?.code]).toEqual([422, 'reserved'])
      },
    )

    it('allows tenant and reserved names on other entity types', async () => {
      const def = await store.attributes.create(
        { key: 'tenant', entity_type: 'user', value_type: 'integer', default_value: '5' },
        admin.id,
      )
      expect(def).toMatchObject({ display_name: 'tenant', default_value: 5, allowed_values: null })
      await store.attributes.create(
        { key: 'id', entity_type: 'table', value_type: 'string' },
        admin.id,
      )
      const dup = await expectNoAudit(store, () =>
        store.attributes.create(
          { key: 'tenant', entity_type: 'user', value_type: 'string' },
          admin.id,
        ),
      )
      expect(dup.code).toBe('already_exists')
    })

    it('checks defaults and allowed values against the value type', async () => {
      const list = await store.attributes.create(
        {
          key: unique('lst'),
          entity_type: 'user',
          value_type: 'list',
          allowed_values: ['a', 'b'],
          default_value: '["a"]',
        },
        admin.id,
      )
      expect(list.default_value).toEqual(['a'])
      for (const body of [
        { value_type: 'integer', default_value: 'x' },
        { value_type: 'boolean', allowed_values: ['maybe'] },
        { value_type: 'string', allowed_values: ['a', 'a'] },
        { value_type: 'string', allowed_values: ['a'], default_value: 'b' },
        { value_type: 'float' },
      ]) {
        const error = await expectNoAudit(store, () =>
          store.attributes.create(
            { key: unique('k'), entity_type: 'user', ...body } as never,
            admin.id,
          ),
        )
        expect(error.status).toBe(422)
      }
    })

    it('refuses a type change that stored values cannot satisfy with 409 incompatible_values', async () => {
      const key = unique('lvl')
      const def = await store.attributes.create(
        { key, entity_type: 'user', value_type: 'string' },
        admin.id,
      )
      const user = await store.users.create(
        { username: unique('v'), password: PASSWORD, attributes: { [key]: 'high' } },
        admin.id,
      )
      const error = await expectNoAudit(store, () =>
        store.attributes.update(def.id, { value_type: 'integer' }, admin.id),
      )
      expect([error.status, error.code, error.details[0]?.message]).toEqual([
        409,
        'incompatible_values',
        user.id,
      ])
      const immutable = await expectNoAudit(store, () =>
        store.attributes.update(def.id, { key: 'other' }, admin.id),
      )
      expect(immutable.details[0]?.code).toBe('immutable')
      const events = await captureChanges(store, () =>
        store.attributes.update(def.id, { allowed_values: ['high', 'low'] }, admin.id),
      )
      expect(events).toEqual([{ type: 'everyone', origin: 'local' }])
    })

    it('refuses to delete a definition users hold values for unless forced', async () => {
      const key = unique('del')
      const def = await store.attributes.create(
        { key, entity_type: 'user', value_type: 'boolean' },
        admin.id,
      )
      const user = await store.users.create(
        { username: unique('w'), password: PASSWORD, attributes: { [key]: true } },
        admin.id,
      )
      const error = await expectNoAudit(store, () => store.attributes.delete(def.id, {}, admin.id))
      expect([error.status, error.code]).toEqual([409, 'in_use'])
      await store.attributes.delete(def.id, { force: true }, admin.id)
      expect((await store.users.get(user.id)).attributes).toEqual({})
      const [entry] = await auditOf(store, def.id)
      expect(entry?.changes.before.affected_user_ids).toEqual([user.id])
    })

    it('lists definitions by key with entity type filter', async () => {
      const page = await store.attributes.list({ entity_type: 'table' })
      expect(page.data.map((d) => d.key)).toEqual(['id'])
    })
  })
}

/** The opened password of a `postgres` datasource. */
async function passwordOf(store: Store, id: string): Promise<string | null | undefined> {
  const conn = await store.datasources.getConnection(id)
  return conn.ds_type === 'postgres' ? conn.config.password : undefined
}
