import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, Store, User } from '../../src/index.js'
import { auditOf, bootstrapAdmin, captureChanges, storeError, unique } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const col = (column_name: string, ordinal_position: number, data_type = 'text') => ({
  column_name,
  ordinal_position,
  data_type,
  is_nullable: true,
})
const columns = [
  col('id', 1, 'integer'),
  col('email', 2),
  col('phone', 3),
  col('salary', 4, 'integer'),
]

/** Catalog tags, tag targets in policies, and classification proposals. */
export function tagsCases(makeStore: MakeStore): void {
  describe('catalog tags and proposals', () => {
    let store: Store
    let admin: User
    let ds: Datasource
    const column = (column_name: string | null, tags: string[]) =>
      store.catalogTags.set(
        ds.id,
        { schema_name: 'public', table_name: 'people', column_name, tags },
        admin.id,
      )

    beforeAll(async () => {
      store = await makeStore()
      admin = await bootstrapAdmin(store)
      ds = await store.datasources.create(
        { name: unique('crm'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await store.catalog.saveCatalog(
        ds.id,
        [
          {
            schema_name: 'public',
            is_selected: true,
            tables: [{ table_name: 'people', is_selected: true, columns }],
          },
        ],
        admin.id,
      )
    })
    afterAll(() => store.close())

    it('tags columns and tables, audited, and reaches sessions through the catalog', async () => {
      const events = await captureChanges(store, () => column('email', ['pii.email', 'pii']))
      // The event says which table the change wrote, so sessions here patch just that one.
      expect(events).toEqual([
        {
          type: 'ds',
          datasourceId: ds.id,
          catalogEdit: {
            version: expect.any(Number),
            relations: [{ schema: 'public', table: 'people' }],
          },
          origin: 'local',
        },
      ])
      await column(null, ['crm'])
      expect(await store.catalogTags.list(ds.id)).toEqual([
        { schema_name: 'public', table_name: 'people', column_name: null, tags: ['crm'] },
        {
          schema_name: 'public',
          table_name: 'people',
          column_name: 'email',
          tags: ['pii', 'pii.email'],
        },
      ])
      expect(await store.catalogTags.list(ds.id, { tag: 'pii' })).toHaveLength(1)
      const audit = (await auditOf(store, ds.id)).find(
        (e) => e.resource_type === 'catalog_tag' && e.changes?.column_name === 'email',
      )
      expect(audit?.changes).toMatchObject({ before: [], after: ['pii', 'pii.email'] })
      await store.access.setAll(ds.id, { enabled: true }, admin.id)
      const input = await store.buildSessionInput(admin.username, ds.name)
      const people = input.catalog.schemas[0]?.tables[0]
      expect(people?.tags).toEqual(['crm'])
      expect(people?.columns.find((c) => c.name === 'email')?.tags).toEqual(['pii', 'pii.email'])
      expect(people?.columns.find((c) => c.name === 'id')?.tags).toBeUndefined()
    })

    it('refuses tags outside the grammar and objects not in the catalog', async () => {
      const bad = await storeError(column('email', ['PII email']))
      expect([bad.status, bad.details[0]?.field]).toEqual([422, 'tags[0]'])
      const missing = await storeError(
        store.catalogTags.set(
          ds.id,
          { schema_name: 'public', table_name: 'people', column_name: 'nope', tags: ['x'] },
          admin.id,
        ),
      )
      expect(missing.status).toBe(404)
    })

    it('stores tag targets with defaults and checks library masks against tagged columns', async () => {
      const policy = await store.policies.create(
        {
          name: unique('mask-pii'),
          policy_type: 'column_mask',
          targets: [{ tags: ['pii.email'] } as never],
          mask_expression: 'mask.email(email)',
        },
        admin.id,
      )
      expect(policy.targets).toEqual([
        { schemas: ['*'], tables: ['*'], columns: ['*'], tags: ['pii.email'] },
      ])
      await column('salary', ['finance.salary'])
      const wrong = await storeError(
        store.policies.create(
          {
            name: unique('bad-mask'),
            policy_type: 'column_mask',
            targets: [{ tags: ['finance'] } as never],
            mask_expression: 'mask.email(salary)',
          },
          admin.id,
        ),
      )
      expect(wrong.status).toBe(422)
      expect(wrong.details[0]?.message).toContain('public.people.salary')
    })

    it('drops the tags of a column the upstream dropped, and reports them', async () => {
      await column('phone', ['pii.phone'])
      const report = await store.catalog.syncCatalog(
        ds.id,
        {
          schemas: ['public'],
          tables: [{ schema_name: 'public', table_name: 'people', table_type: 'TABLE' }],
          column_tables: [{ schema_name: 'public', table_name: 'people' }],
          columns: columns
            .filter((c) => c.column_name !== 'phone')
            .map((c) => ({
              ...c,
              schema_name: 'public',
              table_name: 'people',
              column_default: null,
            })),
        },
        admin.id,
      )
      expect(report.removed_columns).toEqual(['public.people.phone'])
      expect(report.removed_tags).toEqual(['public.people.phone: pii.phone'])
      expect((await store.catalogTags.list(ds.id)).map((o) => o.column_name)).not.toContain('phone')
      // Tags of the columns that stayed are untouched.
      expect((await store.catalogTags.list(ds.id, { tag: 'pii.email' }))[0]?.column_name).toBe(
        'email',
      )
    })

    it('proposes each tag once, accepts into tags, and never re-proposes a rejected one', async () => {
      const found = [
        {
          schema_name: 'public',
          table_name: 'people',
          column_name: 'id',
          tag: 'pii.ssn',
          confidence: 0.91,
          evidence: 'values',
        },
        {
          schema_name: 'public',
          table_name: 'people',
          column_name: 'email',
          tag: 'pii.email',
          confidence: 1,
          evidence: 'name+values',
        },
        {
          schema_name: 'public',
          table_name: 'people',
          column_name: 'salary',
          tag: 'finance.card',
          confidence: 0.8,
          evidence: 'values',
        },
      ]
      const made = await store.catalogTags.propose(ds.id, found, admin.id)
      // email already carries pii.email: not proposed.
      expect(made.map((p) => p.tag).sort()).toEqual(['finance.card', 'pii.ssn'])
      expect(await store.catalogTags.propose(ds.id, found, admin.id)).toEqual([])
      const ssn = made.find((p) => p.tag === 'pii.ssn')
      const card = made.find((p) => p.tag === 'finance.card')
      const accepted = await store.catalogTags.decide(ds.id, ssn?.id as string, 'accept', admin.id)
      expect(accepted.status).toBe('accepted')
      expect((await store.catalogTags.list(ds.id, { tag: 'pii.ssn' }))[0]?.column_name).toBe('id')
      await store.catalogTags.decide(ds.id, card?.id as string, 'reject', admin.id)
      expect(await store.catalogTags.propose(ds.id, found, admin.id)).toEqual([])
      expect(await store.catalogTags.proposals(ds.id)).toEqual([])
      expect((await store.catalogTags.proposals(ds.id, { status: 'all' })).length).toBe(2)
      const twice = await storeError(
        store.catalogTags.decide(ds.id, card?.id as string, 'accept', admin.id),
      )
      expect(twice.code).toBe('not_pending')
    })
  })
}
