import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Datasource, SaveSchemaInput, Store, User } from '../../src/index.js'
import { rowsOf } from '../../src/kernel/db.js'
import { upstreamSnapshot } from '../fixtures/upstream-snapshot.js'
import { userWithDatasource } from '../helpers.js'
import type { MakeStore } from '../resource-store.cases.js'

const column = (column_name: string, ordinal_position: number, extra = {}) => ({
  column_name,
  ordinal_position,
  data_type: ordinal_position === 1 ? 'integer' : 'text',
  is_nullable: ordinal_position > 1,
  ...extra,
})

/** A schema of two tables, a child table and a view over them; `secret` of orders hidden. */
function schema(changes: { hideNote?: boolean; noteType?: string; key?: string[] } = {}) {
  const orders = [
    column('id', 1),
    column('secret', 2, { is_selected: false }),
    column('note', 3, {
      is_selected: !changes.hideNote,
      ...(changes.noteType ? { data_type: changes.noteType } : {}),
    }),
  ]
  return [
    {
      schema_name: 'app',
      schema_alias: 'shop',
      is_selected: true,
      tables: [
        {
          table_name: 'orders',
          is_selected: true,
          primary_key: changes.key ?? ['id'],
          columns: orders,
        },
        {
          table_name: 'orders_2026',
          is_selected: true,
          ancestors: [{ schema: 'app', table: 'orders' }],
          columns: orders,
        },
        {
          table_name: 'recent',
          table_type: 'VIEW',
          is_selected: true,
          view_definition: 'SELECT id, note FROM app.orders',
          view_reads: [{ schema: 'app', table: 'orders' }],
          columns: [column('id', 1), column('note', 2)],
        },
        { table_name: 'unseen', is_selected: false, columns: [column('id', 1)] },
      ],
    },
  ] satisfies SaveSchemaInput[]
}

/**
 * Each catalog table keeps the document sessions read of it (migration 0021), kept by triggers:
 * whatever writes the catalog, the session catalog read from the documents is the exposed
 * catalog the admin view builds from the table and column rows, and every stored document is
 * the one its rows give now.
 */
export function sessionDocsCases(makeStore: MakeStore): void {
  describe('session documents of catalog tables', () => {
    let store: Store
    let admin: User
    let user: User
    let ds: Datasource

    /** Tables whose stored document is not what their rows give now. */
    const staleDocs = () =>
      rowsOf<{ table_name: string }>(
        store.db.execute(sql`SELECT table_name FROM catalog_tables
          WHERE datasource_id = ${ds.id} AND session_doc IS DISTINCT FROM palisade_session_doc(
            id, table_name, table_type, view_definition, view_reads, ancestors, primary_key)`),
      )
    const expectCurrent = async () => {
      expect(await staleDocs()).toEqual([])
      const session = (await store.buildSessionInput(user.username, ds.name)).catalog
      expect(session).toEqual(await store.catalog.exposed(ds.id))
      return session.schemas[0]?.tables ?? []
    }
    const columnsOf = (
      tables: readonly { name: string; columns: readonly { name: string }[] }[],
      name: string,
    ) => tables.find((t) => t.name === name)?.columns.map((c) => c.name)

    beforeAll(async () => {
      store = await makeStore()
      ;({ admin, user, ds } = await userWithDatasource(store))
      await store.catalog.saveCatalog(ds.id, schema(), admin.id)
    })
    afterAll(() => store.close())

    it('are written with the tables and their columns by a save', async () => {
      const tables = await expectCurrent()
      expect(tables.map((t) => t.name)).toEqual(['orders', 'orders_2026', 'recent'])
      expect(columnsOf(tables, 'orders')).toEqual(['id', 'note'])
      expect(tables.find((t) => t.name === 'recent')).toMatchObject({
        kind: 'VIEW',
        definition: 'SELECT id, note FROM app.orders',
        reads: [{ schema: 'app', table: 'orders' }],
      })
    })

    it('follow a save that hides a column, retypes one or changes the key', async () => {
      await store.catalog.saveCatalog(ds.id, schema({ hideNote: true }), admin.id)
      expect(columnsOf(await expectCurrent(), 'orders')).toEqual(['id'])
      await store.catalog.saveCatalog(
        ds.id,
        schema({ noteType: 'varchar', key: ['id', 'note'] }),
        admin.id,
      )
      const orders = (await expectCurrent()).find((t) => t.name === 'orders')
      expect(orders?.columns.find((c) => c.name === 'note')?.type).toBe('varchar')
      expect(orders?.primaryKey).toEqual(['id', 'note'])
    })

    it('follow a sync that adds, drops and reorders columns', async () => {
      // Upstream: orders gains `added`, loses `note`; orders_2026 puts `note` first.
      await store.catalog.syncCatalog(
        ds.id,
        upstreamSnapshot([
          { schema_name: 'app', table_name: 'orders', columns: ['id', 'secret', 'added'] },
          {
            schema_name: 'app',
            table_name: 'orders_2026',
            columns: ['note', 'id', 'secret'],
            ancestors: [{ schema: 'app', table: 'orders' }],
          },
          { schema_name: 'app', table_name: 'recent', columns: ['id', 'note'] },
          { schema_name: 'app', table_name: 'unseen', columns: ['id'] },
        ]),
        admin.id,
      )
      const tables = await expectCurrent()
      expect(columnsOf(tables, 'orders')).toEqual(['id', 'added'])
      expect(columnsOf(tables, 'orders_2026')).toEqual(['note', 'id'])
    })

    it('go with a table a save removes, and a table exposed again is read whole', async () => {
      const app = schema()[0] as SaveSchemaInput
      const without = { ...app, tables: app.tables.filter((t) => t.table_name !== 'orders_2026') }
      await store.catalog.saveCatalog(ds.id, [without], admin.id)
      expect((await expectCurrent()).map((t) => t.name)).toEqual(['orders', 'recent'])
      const shown = {
        ...app,
        tables: app.tables.map((t) =>
          t.table_name === 'unseen' ? { ...t, is_selected: true } : t,
        ),
      }
      await store.catalog.saveCatalog(ds.id, [shown], admin.id)
      const tables = await expectCurrent()
      expect(tables.map((t) => t.name)).toEqual(['orders', 'orders_2026', 'recent', 'unseen'])
      expect(columnsOf(tables, 'unseen')).toEqual(['id'])
    })

    it('are what a session reads: a document cleared behind the store shows there', async () => {
      // The negative check that sessions read the documents at all (and not the rows).
      await store.db.execute(sql`UPDATE catalog_tables SET session_doc = NULL
        WHERE datasource_id = ${ds.id} AND table_name = 'recent'`)
      expect((await staleDocs()).map((t) => t.table_name)).toEqual(['recent'])
      // A save that changes another table moves the version: the catalog is read whole, and the
      // table without a document is left out, not guessed.
      await store.catalog.saveCatalog(ds.id, schema({ hideNote: true }), admin.id)
      const session = (await store.buildSessionInput(user.username, ds.name)).catalog
      expect(session.schemas[0]?.tables.map((t) => t.name)).toEqual(['orders', 'orders_2026'])
    })
  })
}
