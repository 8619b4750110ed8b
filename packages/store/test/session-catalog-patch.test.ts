/**
 * The session catalog kept between logins is patched after a sync or a tag (session-catalog-patch.ts):
 * only the tables the change wrote are read again, every other table object is kept, and the
 * result is always the catalog a whole read gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {
  Datasource,
  SaveSchemaInput,
  Store,
  UpstreamCatalogSnapshot,
  User,
} from '../src/index.js'
import { createTestStore } from './fixtures/pglite.js'
import { upstreamSnapshot } from './fixtures/upstream-snapshot.js'
import { userWithDatasource } from './helpers.js'

const TABLES = ['a', 'b', 'c']
const COLUMNS = ['id', 'note']

const saved: SaveSchemaInput[] = [
  {
    schema_name: 'app',
    is_selected: true,
    tables: TABLES.map((table_name) => ({
      table_name,
      is_selected: true,
      primary_key: ['id'],
      columns: COLUMNS.map((column_name, i) => ({
        column_name,
        ordinal_position: i + 1,
        data_type: i === 0 ? 'integer' : 'text',
        is_nullable: i > 0,
      })),
    })),
  },
]

/** The upstream as a sync reads it: the saved tables, `extra` columns added where given. */
function upstream(
  extra: Record<string, string[]> = {},
  ancestors: Record<string, { schema: string; table: string }[]> = {},
): UpstreamCatalogSnapshot {
  return upstreamSnapshot(
    TABLES.map((table_name) => ({
      schema_name: 'app',
      table_name,
      columns: [...COLUMNS, ...(extra[table_name] ?? [])],
      ancestors: ancestors[table_name] ?? null,
    })),
  )
}

describe('the session catalog after a sync or a tag', () => {
  let store: Store
  let admin: User
  let user: User
  let ds: Datasource
  const tablesOf = async () =>
    (await store.buildSessionInput(user.username, ds.name)).catalog.schemas[0]?.tables ?? []

  beforeAll(async () => {
    store = await createTestStore()
    const made = await userWithDatasource(store)
    admin = made.admin
    user = made.user
    ds = made.ds
    await store.catalog.saveCatalog(ds.id, saved, admin.id)
  })
  afterAll(() => store.close())

  it('reads again only the table a sync changed, and equals a whole read', async () => {
    const [a, b, c] = await tablesOf()
    await store.catalog.syncCatalog(ds.id, upstream({ b: ['added'] }), admin.id)
    const after = await tablesOf()
    expect(after[0]).toBe(a)
    expect(after[2]).toBe(c)
    expect(after[1]).not.toBe(b)
    expect(after[1]?.columns.map((col) => col.name)).toEqual(['id', 'note', 'added'])
    const { catalog } = await store.buildSessionInput(user.username, ds.name)
    expect(catalog).toEqual(await store.catalog.exposed(ds.id))
  })

  it('reads again only the table whose tags changed', async () => {
    const [a, b] = await tablesOf()
    await store.catalogTags.set(
      ds.id,
      { schema_name: 'app', table_name: 'c', column_name: 'note', tags: ['pii'] },
      admin.id,
    )
    const after = await tablesOf()
    expect(after[0]).toBe(a)
    expect(after[1]).toBe(b)
    expect(after[2]?.columns.find((col) => col.name === 'note')?.tags).toEqual(['pii'])
    const { catalog } = await store.buildSessionInput(user.username, ds.name)
    expect(catalog).toEqual(await store.catalog.exposed(ds.id))
  })

  it('reads the whole catalog when a sync moves inheritance (other tables gain descendants)', async () => {
    const parent = { schema: 'app', table: 'a' }
    await store.catalog.syncCatalog(ds.id, upstream({ b: ['added'] }, { b: [parent] }), admin.id)
    const [a] = await tablesOf()
    expect(a?.descendants?.map((d) => d.table)).toEqual(['b'])
    const { catalog } = await store.buildSessionInput(user.username, ds.name)
    expect(catalog).toEqual(await store.catalog.exposed(ds.id))
  })
})
