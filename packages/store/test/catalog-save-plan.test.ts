/**
 * A save compared with the stored catalog before its transaction (catalog-save-plan.ts): the
 * transaction writes only the tables that differ, and what it records is what changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, SaveSchemaInput, Store, User } from '../src/index.js'
import { createTestStore } from './fixtures/pglite.js'
import { auditOf, bootstrapAdmin, captureChanges, unique } from './helpers.js'

/** Schema `app` with tables a, b, c of columns id and note; `note` of `b` as given. */
function selection(note: { data_type?: string; is_selected?: boolean } = {}): SaveSchemaInput[] {
  return [
    {
      schema_name: 'app',
      is_selected: true,
      tables: ['a', 'b', 'c'].map((table_name) => ({
        table_name,
        is_selected: true,
        columns: [
          { column_name: 'id', ordinal_position: 1, data_type: 'integer', is_nullable: false },
          {
            column_name: 'note',
            ordinal_position: 2,
            data_type: 'text',
            is_nullable: true,
            ...(table_name === 'b' ? note : {}),
          },
        ],
      })),
    },
  ]
}

describe('a save compared with the stored catalog first', () => {
  let store: Store
  let admin: User
  let ds: Datasource
  const typeOf = async (table: string, column: string) =>
    (await store.catalog.get(ds.id)).schemas[0]?.tables
      .find((t) => t.table_name === table)
      ?.columns.find((c) => c.column_name === column)?.data_type

  beforeAll(async () => {
    store = await createTestStore()
    admin = await bootstrapAdmin(store)
    ds = await store.datasources.create(
      { name: unique('plan'), ds_type: 'pglite', config: {} },
      admin.id,
    )
    await store.catalog.saveCatalog(ds.id, selection(), admin.id)
  })
  afterAll(() => store.close())

  it('changes nothing and tells no session when the same selection is saved again', async () => {
    const before = (await auditOf(store, ds.id)).length
    const events = await captureChanges(store, () =>
      store.catalog.saveCatalog(ds.id, selection(), admin.id),
    )
    expect(events).toEqual([])
    expect((await auditOf(store, ds.id)).length).toBe(before + 1)
  })

  it('writes the one column whose type changed', async () => {
    await store.catalog.saveCatalog(ds.id, selection({ data_type: 'varchar(20)' }), admin.id)
    expect(await typeOf('b', 'note')).toBe('varchar(20)')
    expect(await typeOf('a', 'note')).toBe('text')
    expect(await typeOf('c', 'note')).toBe('text')
  })

  it('records the exposure of just the table whose column it hid', async () => {
    await store.catalog.saveCatalog(
      ds.id,
      selection({ data_type: 'varchar(20)', is_selected: false }),
      admin.id,
    )
    const [entry] = await auditOf(store, ds.id)
    expect(entry?.changes).toEqual({
      field: 'catalog',
      source: 'save_catalog',
      before: { 'app.b': ['id', 'note'] },
      after: { 'app.b': ['id'] },
    })
  })
})
