/**
 * A session catalog of more than a thousand tables is read a thousand tables per statement
 * (session-catalog.ts), so the embedded store answers other requests between them: the result is
 * the catalog the admin view exposes, in the same order, with what is hidden left out.
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

/** Table names in an order that is not the order they are saved in. */
const names = (count: number) =>
  Array.from({ length: count }, (_, i) => `t${String((i * 7919) % count).padStart(5, '0')}`)

function schema(
  name: string,
  count: number,
  extra: Partial<SaveSchemaInput> = {},
): SaveSchemaInput {
  return {
    schema_name: name,
    is_selected: true,
    tables: names(count).map((table_name, i) => ({
      table_name,
      // Every 97th table is not exposed; every 13th hides its `secret` column.
      is_selected: i % 97 !== 5,
      primary_key: ['id'],
      columns: ['id', 'secret', 'note'].map((column_name, position) => ({
        column_name,
        ordinal_position: position + 1,
        data_type: position === 0 ? 'integer' : 'text',
        is_nullable: position > 0,
        is_selected: !(column_name === 'secret' && i % 13 === 0),
      })),
    })),
    ...extra,
  }
}

/** The upstream as a sync reads it: every saved table, `added` of alpha with one more column. */
function upstream(
  counts: Record<string, number>,
  added: ReadonlySet<string>,
): UpstreamCatalogSnapshot {
  return upstreamSnapshot(
    Object.entries(counts).flatMap(([schema_name, count]) =>
      names(count).map((table_name) => ({
        schema_name,
        table_name,
        columns: [
          'id',
          'secret',
          'note',
          ...(schema_name === 'alpha' && added.has(table_name) ? ['added'] : []),
        ],
      })),
    ),
  )
}

describe('a session catalog larger than one read', () => {
  let store: Store
  let admin: User
  let user: User
  let ds: Datasource
  const catalogOf = async () => (await store.buildSessionInput(user.username, ds.name)).catalog

  beforeAll(async () => {
    store = await createTestStore()
    const made = await userWithDatasource(store)
    admin = made.admin
    user = made.user
    ds = made.ds
    await store.catalog.saveCatalog(
      ds.id,
      [
        schema('beta', 1500, { schema_alias: 'b' }),
        schema('alpha', 1200),
        schema('hidden', 20, { is_selected: false }),
      ],
      admin.id,
    )
  }, 120_000)
  afterAll(() => store.close())

  it('equals the exposed catalog, every table once and in order, hidden objects left out', async () => {
    const catalog = await catalogOf()
    expect(catalog).toEqual(await store.catalog.exposed(ds.id))
    expect(catalog.schemas.map((s) => [s.name, s.alias ?? null])).toEqual([
      ['alpha', null],
      ['beta', 'b'],
    ])
    const beta = catalog.schemas[1]?.tables ?? []
    const exposed = names(1500)
      .filter((_, i) => i % 97 !== 5)
      .sort()
    expect(beta.map((t) => t.name)).toEqual(exposed)
    const hiding = names(1500).filter((_, i) => i % 13 === 0 && i % 97 !== 5)
    for (const name of hiding) {
      const table = beta.find((t) => t.name === name)
      expect(table?.columns.map((c) => c.name)).toEqual(['id', 'note'])
    }
    const notExposed = names(1500).find((_, i) => i % 97 === 5)
    expect(beta.some((t) => t.name === notExposed)).toBe(false)
  })

  it('patches a sync that changed more than a thousand tables into the exposed catalog', async () => {
    await catalogOf()
    const added = new Set(names(1200).slice(0, 1100))
    await store.catalog.syncCatalog(
      ds.id,
      upstream({ alpha: 1200, beta: 1500, hidden: 20 }, added),
      admin.id,
    )
    const catalog = await catalogOf()
    expect(catalog).toEqual(await store.catalog.exposed(ds.id))
    const alpha = catalog.schemas[0]?.tables ?? []
    const grown = alpha.filter((t) => t.columns.some((c) => c.name === 'added'))
    expect(grown.map((t) => t.name).sort()).toEqual(
      [...added].filter((name) => alpha.some((t) => t.name === name)).sort(),
    )
    expect(grown.length).toBeGreaterThan(1000)
  }, 120_000)
})
