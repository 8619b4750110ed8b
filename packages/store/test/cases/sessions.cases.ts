import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, SaveSchemaInput, Store, User } from '../../src/index.js'
import {
  auditOf,
  bootstrapAdmin,
  captureChanges,
  expectNoAudit,
  PASSWORD,
  unique,
} from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const col = (column_name: string, ordinal_position: number, extra: object = {}) => ({
  column_name,
  ordinal_position,
  data_type: column_name === 'id' ? 'integer' : 'text',
  is_nullable: column_name !== 'id',
  ...extra,
})

const shop: SaveSchemaInput[] = [
  {
    schema_name: 'public',
    schema_alias: 'app',
    is_selected: true,
    tables: [
      {
        table_name: 'orders',
        is_selected: true,
        columns: [col('id', 1), col('tenant', 2), col('secret', 3, { is_selected: false })],
      },
      { table_name: 'payments', is_selected: true, columns: [col('id', 1), col('order_id', 2)] },
      { table_name: 'hidden', is_selected: false, columns: [col('id', 1)] },
    ],
  },
  {
    schema_name: 'internal',
    is_selected: false,
    tables: [{ table_name: 'x', is_selected: true, columns: [col('id', 1)] }],
  },
]

/** Catalog, relationships, anchors and the session context builder (docs/admin-api.md#catalog-discovery, docs/admin-api.md#relationships-anchors-and-their-checks). */
export function sessionsCases(makeStore: MakeStore): void {
  describe('catalog, relationships and session contexts', () => {
    let store: Store
    let admin: User
    let ds: Datasource
    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
      ds = await store.datasources.create(
        { name: unique('shop'), ds_type: 'pglite', config: {} },
        admin.id,
      )
    })
    afterAll(() => store.close())

    it('saves a catalog with stable UUIDv5 ids and one catalog audit entry', async () => {
      const events = await captureChanges(store, async () =>
        expect(await store.catalog.saveCatalog(ds.id, shop, admin.id)).toEqual({
          exposed_tables: 2,
          exposed_columns: 4,
        }),
      )
      expect(events).toEqual([{ type: 'ds', datasourceId: ds.id, origin: 'local' }])
      const view = await store.catalog.get(ds.id)
      expect(view.schemas.map((s) => s.schema_name)).toEqual(['internal', 'public'])
      const orders = view.schemas[1]?.tables.find((t) => t.table_name === 'orders')
      expect(orders?.columns.map((c) => [c.column_name, c.is_selected])).toEqual([
        ['id', true],
        ['tenant', true],
        ['secret', false],
      ])
      const [entry] = await auditOf(store, ds.id)
      expect(entry?.changes).toMatchObject({
        field: 'catalog',
        source: 'save_catalog',
        before: { 'public.orders': null, schema_aliases: { public: null } },
        after: {
          'public.orders': ['id', 'tenant'],
          'public.payments': ['id', 'order_id'],
          schema_aliases: { public: 'app' },
        },
      })
      await store.catalog.saveCatalog(ds.id, shop, admin.id)
      expect((await store.catalog.get(ds.id)).schemas[1]?.tables[0]?.id).toBe(
        view.schemas[1]?.tables[0]?.id,
      )
      const [again] = await auditOf(store, ds.id)
      expect(again?.changes).toEqual({
        field: 'catalog',
        source: 'save_catalog',
        before: {},
        after: {},
      })
    })

    it('rejects duplicate visible schema names and bad aliases with 422', async () => {
      const dup = await expectNoAudit(store, () =>
        store.catalog.saveCatalog(
          ds.id,
          [
            { schema_name: 'a', schema_alias: 'x', is_selected: true, tables: [] },
            { schema_name: 'x', is_selected: true, tables: [] },
          ],
          admin.id,
        ),
      )
      expect(dup.status).toBe(422)
      const alias = await expectNoAudit(store, () =>
        store.catalog.saveCatalog(
          ds.id,
          [{ schema_name: 'a', schema_alias: '9x', is_selected: true, tables: [] }],
          admin.id,
        ),
      )
      expect(alias.status).toBe(422)
    })

    it('creates relationships and anchors with their rules and audit entries', async () => {
      const view = await store.catalog.get(ds.id)
      const tables = view.schemas.flatMap((s) => s.tables)
      const orders = tables.find((t) => t.table_name === 'orders') as { id: string }
      const payments = tables.find((t) => t.table_name === 'payments') as { id: string }
      const rel = await store.relationships.create(
        ds.id,
        {
          child_table_id: payments.id,
          child_column_name: 'order_id',
          parent_table_id: orders.id,
          parent_column_name: 'id',
        },
        admin.id,
      )
      expect(rel).toMatchObject({
        child_schema_name: 'public',
        child_table_name: 'payments',
        parent_table_name: 'orders',
      })
      const [entry] = await auditOf(store, rel.id)
      expect(entry?.changes.after).toMatchObject({
        data_source_id: ds.id,
        child_column_name: 'order_id',
      })
      const dup = await expectNoAudit(store, () =>
        store.relationships.create(
          ds.id,
          {
            child_table_id: payments.id,
            child_column_name: 'order_id',
            parent_table_id: orders.id,
            parent_column_name: 'id',
          },
          admin.id,
        ),
      )
      expect(dup.code).toBe('already_exists')
      const missingCol = await expectNoAudit(store, () =>
        store.relationships.create(
          ds.id,
          {
            child_table_id: payments.id,
            child_column_name: 'nope',
            parent_table_id: orders.id,
            parent_column_name: 'id',
          },
          admin.id,
        ),
      )
      expect(missingCol.status).toBe(422)
      const same = await expectNoAudit(store, () =>
        store.relationships.create(
          ds.id,
          {
            child_table_id: orders.id,
            child_column_name: 'id',
            parent_table_id: orders.id,
            parent_column_name: 'id',
          },
          admin.id,
        ),
      )
      expect(same.status).toBe(422)
      const anchor = await store.relationships.createAnchor(
        ds.id,
        { child_table_id: payments.id, resolved_column_name: 'tenant', relationship_id: rel.id },
        admin.id,
      )
      expect(anchor).toMatchObject({ relationship_id: rel.id, actual_column_name: null })
      const both = await expectNoAudit(store, () =>
        store.relationships.createAnchor(
          ds.id,
          {
            child_table_id: payments.id,
            resolved_column_name: 'x',
            relationship_id: rel.id,
            actual_column_name: 'y',
          },
          admin.id,
        ),
      )
      expect(both.status).toBe(422)
      const mismatch = await expectNoAudit(store, () =>
        store.relationships.createAnchor(
          ds.id,
          { child_table_id: orders.id, resolved_column_name: 'x', relationship_id: rel.id },
          admin.id,
        ),
      )
      expect(mismatch.status).toBe(422)
      const inUse = await expectNoAudit(store, () =>
        store.relationships.delete(ds.id, rel.id, admin.id),
      )
      expect([inUse.status, inUse.code]).toEqual([409, 'in_use'])
      await store.relationships.createAnchor(
        ds.id,
        { child_table_id: orders.id, resolved_column_name: 'org', actual_column_name: ' tenant ' },
        admin.id,
      )
      expect(
        (await store.relationships.listAnchors(ds.id)).map((a) => a.actual_column_name),
      ).toEqual([null, 'tenant'])
    })

    it('builds a session input with roles, attributes, the exposed catalog and deduplicated policies', async () => {
      await store.attributes.create(
        { key: 'tenant', entity_type: 'user', value_type: 'integer', default_value: 0 },
        admin.id,
      )
      await store.attributes.create(
        { key: 'label', entity_type: 'table', value_type: 'string' },
        admin.id,
      )
      const user = await store.users.create(
        { username: unique('sess'), password: PASSWORD, attributes: { tenant: 3 } },
        admin.id,
      )
      const child = await store.roles.create({ name: unique('child') }, admin.id)
      const parent = await store.roles.create({ name: unique('parent') }, admin.id)
      await store.roles.addParent(child.id, { parent_role_id: parent.id }, admin.id)
      await store.roles.addMembers(child.id, { user_ids: [user.id] }, admin.id)
      await store.access.setRoles(ds.id, { role_ids: [parent.id] }, admin.id)
      const fn = await store.decisionFunctions.create(
        {
          name: unique('fn'),
          decision_fn: 'function evaluate() { return { fire: true } }',
          evaluate_context: 'query',
          decision_config: { a: 1 },
        },
        admin.id,
      )
      const filter = await store.policies.create(
        {
          name: unique('f'),
          policy_type: 'row_filter',
          targets: [{ schemas: ['public'], tables: ['orders'] }],
          filter_expression: 'tenant = {user.tenant}',
          decision_function_id: fn.id,
        },
        admin.id,
      )
      const disabled = await store.policies.create(
        {
          name: unique('d'),
          policy_type: 'table_deny',
          targets: [{ schemas: ['*'], tables: ['*'] }],
          is_enabled: false,
        },
        admin.id,
      )
      await store.assignments.assign(ds.id, { policy_id: filter.id, priority: 50 }, admin.id)
      await store.assignments.assign(
        ds.id,
        { policy_id: filter.id, role_id: parent.id, priority: 10 },
        admin.id,
      )
      const own = await store.assignments.assign(
        ds.id,
        { policy_id: filter.id, user_id: user.id, priority: 10 },
        admin.id,
      )
      await store.assignments.assign(ds.id, { policy_id: disabled.id }, admin.id)
      const input = await store.buildSessionInput(user.username, ds.name)
      expect(input.user).toEqual({
        id: user.id,
        username: user.username,
        roles: [child.name, parent.name],
        attributes: { tenant: 3 },
      })
      expect(input.datasource).toEqual({
        maskKey: expect.stringMatching(/^[0-9a-f]{64}$/),
        id: ds.id,
        name: ds.name,
        accessMode: 'policy_required',
      })
      expect(input.attributeDefinitions).toEqual([
        { key: 'tenant', valueType: 'integer', defaultValue: 0 },
      ])
      expect(input.catalog).toEqual({
        schemas: [
          {
            name: 'public',
            alias: 'app',
            tables: [
              {
                name: 'orders',
                kind: 'TABLE',
                columns: [
                  { name: 'id', type: 'integer', nullable: false },
                  { name: 'tenant', type: 'text', nullable: true },
                ],
              },
              {
                name: 'payments',
                kind: 'TABLE',
                columns: [
                  { name: 'id', type: 'integer', nullable: false },
                  { name: 'order_id', type: 'text', nullable: true },
                ],
              },
            ],
          },
        ],
      })
      expect(input.policies).toHaveLength(1)
      expect(input.policies[0]).toMatchObject({
        id: filter.id,
        priority: 10,
        type: 'row_filter',
        filterExpression: 'tenant = {user.tenant}',
        decision: {
          functionId: fn.id,
          version: 1,
          config: { a: 1 },
          evaluateContext: 'query',
          onError: 'deny',
          isEnabled: true,
        },
      })
      expect(input.policies[0]?.decision?.artifact).toEqual(expect.any(String))
      // Reached at priority 10 by role and by user: the user assignment wins (docs/roles-and-access.md#policy-assignments),
      // and core orders masks by the same scope and assignment id.
      expect(input.policies[0]).toMatchObject({ scope: 'user', assignmentId: own.id })
      expect(input.relationships).toEqual([
        expect.objectContaining({
          childSchema: 'public',
          childTable: 'payments',
          childColumn: 'order_id',
          parentTable: 'orders',
          parentColumn: 'id',
        }),
      ])
      expect(input.anchors).toContainEqual({
        schema: 'public',
        table: 'orders',
        resolvedColumn: 'org',
        relationshipId: null,
        actualColumn: 'tenant',
      })
      const entries = await store.sessions.effectivePolicies(user.id, ds.id)
      expect(entries.map((e) => [e.scope, e.source, e.applies])).toEqual([
        ['user', 'direct', true],
        ['role', `inherited from '${parent.name}'`, false],
        ['all', 'all users', false],
        ['all', 'all users', false],
      ])
      const again = await store.buildSessionInput(user.username, ds.name)
      expect(again.epoch).toBeGreaterThan(input.epoch as number)
    })

    it('reflects policy, assignment, catalog and definition changes on the next build', async () => {
      const user = await store.users.create(
        { username: unique('fresh'), password: PASSWORD },
        admin.id,
      )
      const other = await store.datasources.create(
        { name: unique('fresh'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.access.setUsers(other.id, { user_ids: [user.id] }, admin.id)
      const build = () => store.buildSessionInput(user.username, other.name)
      expect((await build()).policies).toEqual([])
      const policy = await store.policies.create(
        {
          name: unique('fresh'),
          policy_type: 'table_deny',
          targets: [{ schemas: ['*'], tables: ['a'] }],
        },
        admin.id,
      )
      await store.assignments.assign(other.id, { policy_id: policy.id, user_id: user.id }, admin.id)
      expect((await build()).policies.map((p) => p.targets[0]?.tables)).toEqual([['a']])
      await store.policies.update(
        policy.id,
        { version: 1, targets: [{ schemas: ['*'], tables: ['b'] }] },
        admin.id,
      )
      expect((await build()).policies.map((p) => [p.version, p.targets[0]?.tables])).toEqual([
        [2, ['b']],
      ])
      await store.policies.update(policy.id, { version: 2, is_enabled: false }, admin.id)
      expect((await build()).policies).toEqual([])
      await store.catalog.saveCatalog(
        other.id,
        [{ schema_name: 's', is_selected: true, tables: [] }],
        admin.id,
      )
      expect((await build()).catalog.schemas.map((s) => s.name)).toEqual(['s'])
      const key = unique('k')
      await store.attributes.create({ key, entity_type: 'user', value_type: 'string' }, admin.id)
      expect((await build()).attributeDefinitions.map((d) => d.key)).toContain(key)
      await store.access.setUsers(other.id, { user_ids: [] }, admin.id)
      await expect(build()).rejects.toThrow('datasource not available')
    })

    it('builds sessions from the same exposed catalog the catalog service reads', async () => {
      const user = await store.users.create(
        { username: unique('same'), password: PASSWORD },
        admin.id,
      )
      const other = await store.datasources.create(
        { name: unique('same'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.access.setUsers(other.id, { user_ids: [user.id] }, admin.id)
      const parent = { schema: 'b', table: 'parent' }
      await store.catalog.saveCatalog(
        other.id,
        [
          {
            schema_name: 'b',
            schema_alias: 'bee',
            is_selected: true,
            tables: [
              {
                table_name: 'parent',
                is_selected: true,
                primary_key: ['id'],
                columns: [col('id', 1), col('note', 2)],
              },
              {
                table_name: 'child',
                is_selected: true,
                ancestors: [parent],
                primary_key: ['id', 'secret'],
                columns: [col('id', 1), col('secret', 2, { is_selected: false })],
              },
              { table_name: 'hidden_child', is_selected: false, ancestors: [parent] },
              {
                table_name: 'v',
                table_type: 'VIEW',
                is_selected: true,
                view_definition: 'SELECT parent.id FROM b.parent',
                view_reads: [parent],
                columns: [col('id', 1)],
              },
            ],
          },
          { schema_name: 'a', is_selected: true, tables: [] },
          { schema_name: 'c', is_selected: false, tables: [] },
        ],
        admin.id,
      )
      const { catalog } = await store.buildSessionInput(user.username, other.name)
      expect(catalog).toEqual(await store.catalog.exposed(other.id))
      expect(catalog.schemas.map((s) => s.name)).toEqual(['a', 'b'])
      expect(catalog.schemas[1]?.tables.map((t) => t.name)).toEqual(['child', 'parent', 'v'])
    })

    it('answers unknown, inactive and not-granted cases with one indistinguishable error', async () => {
      const outsider = await store.users.create(
        { username: unique('out'), password: PASSWORD },
        admin.id,
      )
      const inactive = await store.users.create(
        { username: unique('ina'), password: PASSWORD, is_active: false },
        admin.id,
      )
      await store.access.setUsers(ds.id, { user_ids: [inactive.id] }, admin.id)
      const off = await store.datasources.create(
        { name: unique('off'), ds_type: 'pglite', config: {}, is_active: false },
        admin.id,
      )
      await store.access.setAll(off.id, { enabled: true }, admin.id)
      const errors = await Promise.all(
        [
          ['nobody', ds.name],
          [outsider.username, ds.name],
          [inactive.username, ds.name],
          [outsider.username, 'no-such-ds'],
          [outsider.username, off.name],
        ].map(([u, d]) => store.buildSessionInput(u as string, d as string).catch((e: Error) => e)),
      )
      for (const e of errors) {
        expect(e).toBeInstanceOf(Error)
        expect([e.constructor.name, (e as Error).message]).toEqual([
          'SessionDeniedError',
          'datasource not available',
        ])
      }
    })

    it('removes relationships and anchors of tables dropped from the catalog, with reasons', async () => {
      const anchors = await store.relationships.listAnchors(ds.id)
      await store.catalog.saveCatalog(
        ds.id,
        [
          {
            ...(shop[0] as SaveSchemaInput),
            tables: [(shop[0] as SaveSchemaInput).tables[0] as never],
          },
        ],
        admin.id,
      )
      expect(await store.relationships.list(ds.id)).toEqual([])
      expect((await store.relationships.listAnchors(ds.id)).map((a) => a.id)).toEqual([
        anchors[1]?.id,
      ])
      const [entry] = await auditOf(store, anchors[0]?.id as string)
      expect(entry?.changes).toMatchObject({ reason: 'catalog_saved' })
    })
  })
}
