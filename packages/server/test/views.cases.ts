import type { SaveSchemaInput } from '@palisade/store'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { annotateExpansion } from '../src/http/catalog-expansion.js'
import { readColumns, readRelations } from '../src/upstream/upstream-catalog.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { SHOP_CATALOG } from './fixtures/shop.js'
import { upstreamOf } from './fixtures/upstream-handle.js'

/** Upstream views over the shop, and a table the admin does not expose. */
const VIEWS_SQL = `
CREATE TABLE public.ledger (id int PRIMARY KEY, tenant text NOT NULL, entry text);
INSERT INTO public.ledger VALUES (1, 'acme', 'acme entry'), (2, 'globex', 'globex entry');
CREATE VIEW public.v_orders AS SELECT id, tenant, amount FROM public.orders;
CREATE VIEW public.v_customers AS SELECT id, name, email, ssn FROM public.customers;
CREATE VIEW public.v_big AS SELECT id FROM public.v_orders WHERE amount > 15;
CREATE VIEW public.v_secret_orders AS
  SELECT o.id, s.value FROM public.orders o JOIN public.secrets s ON s.id = 1;
CREATE MATERIALIZED VIEW public.mv_orders AS SELECT id, tenant, amount FROM public.orders;
CREATE VIEW public.v_ledger AS SELECT id, tenant, entry FROM public.ledger;
`
const EXPOSED_VIEWS = [
  'v_orders',
  'v_customers',
  'v_big',
  'v_secret_orders',
  'mv_orders',
  'v_ledger',
] as const

/** Views through the data plane: expanded with the user's policies, or failing closed. */
export function runViewCases(name: string, makeHarness: MakeHarness): void {
  describe(`views over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
      const upstream = await upstreamOf(h)
      try {
        await upstream.exec(VIEWS_SQL)
        const relations = await readRelations(upstream, ['public'])
        const columns = await readColumns(
          upstream,
          EXPOSED_VIEWS.map((table) => ({ schema: 'public', table })),
        )
        const base = SHOP_CATALOG[0] as SaveSchemaInput
        const schemas: SaveSchemaInput[] = [
          {
            ...base,
            tables: [
              ...base.tables,
              ...EXPOSED_VIEWS.map((table) => {
                const relation = relations.find((r) => r.table_name === table)
                return {
                  table_name: table,
                  table_type: relation?.table_type ?? null,
                  view_definition: relation?.view_definition ?? null,
                  view_reads: relation?.view_reads ?? null,
                  is_selected: true,
                  columns: columns.filter((c) => c.table_name === table),
                }
              }),
            ],
          },
        ]
        await h.store.catalog.saveCatalog(h.shop.datasourceId, schemas, h.shop.admin.id)
      } finally {
        await upstream.close()
      }
      const ledger = await h.store.policies.create(
        {
          name: 'ledger-tenant',
          policy_type: 'row_filter',
          targets: [{ schemas: ['public'], tables: ['ledger'] }],
          filter_expression: 'tenant = {user.tenant}',
        },
        h.shop.admin.id,
      )
      await h.store.assignments.assign(
        h.shop.datasourceId,
        { policy_id: ledger.id, scope: 'user', user_id: h.shop.alice.id },
        h.shop.admin.id,
      )
    })
    afterAll(() => h?.close())

    const failure = async (client: pg.Client, sql: string) => {
      try {
        await client.query(sql)
      } catch (error) {
        const e = error as { code?: string; message: string }
        return { code: e.code, message: e.message }
      }
      throw new Error(`expected ${sql} to fail`)
    }

    it('reads a view with the row filter, mask and deny of its base tables', async () => {
      const alice = await h.connect('alice')
      expect((await alice.query('SELECT id FROM v_orders ORDER BY id')).rows).toEqual([
        { id: 10 },
        { id: 11 },
      ])
      expect((await alice.query('SELECT id FROM v_big')).rows).toEqual([{ id: 11 }])
      expect((await alice.query('SELECT * FROM v_customers ORDER BY id')).rows).toEqual([
        { id: 1, name: 'Ann', email: '***' },
        { id: 2, name: 'Bob', email: '***' },
      ])
      const extended = await alice.query({
        text: 'SELECT count(*)::int AS n FROM v_orders WHERE id > $1',
        values: [0],
      })
      expect(extended.rows).toEqual([{ n: 2 }])
      const carol = await h.connect('carol')
      expect((await carol.query('SELECT count(*)::int AS n FROM v_orders')).rows).toEqual([
        { n: 4 },
      ])
    })

    it('hides views that read a hidden or governed relation, like missing ones', async () => {
      const alice = await h.connect('alice')
      for (const view of ['v_secret_orders', 'mv_orders', 'v_ledger']) {
        expect(await failure(alice, `SELECT * FROM ${view}`)).toEqual({
          code: '42P01',
          message: `relation "${view}" does not exist`,
        })
      }
      const listed = await alice.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      )
      expect(listed.rows.map((r) => r.table_name)).toEqual([
        'customers',
        'orders',
        'v_big',
        'v_customers',
        'v_orders',
      ])
      const carol = await h.connect('carol')
      for (const view of ['v_secret_orders', 'mv_orders', 'v_ledger']) {
        expect(
          (await carol.query(`SELECT count(*)::int AS n FROM ${view}`)).rows[0].n,
        ).toBeGreaterThan(0)
      }
    })

    it('applies a policy change to views on the next query', async () => {
      const alice = await h.connect('alice')
      expect((await alice.query('SELECT count(*)::int AS n FROM v_big')).rows).toEqual([{ n: 1 }])
      const deny = await h.store.policies.create(
        {
          name: 'orders-hidden',
          policy_type: 'table_deny',
          targets: [{ schemas: ['public'], tables: ['orders'] }],
        },
        h.shop.admin.id,
      )
      const assignment = await h.store.assignments.assign(
        h.shop.datasourceId,
        { policy_id: deny.id, scope: 'user', user_id: h.shop.alice.id },
        h.shop.admin.id,
      )
      try {
        const deadline = Date.now() + 5000
        let outcome = ''
        while (Date.now() < deadline) {
          outcome = await alice.query('SELECT count(*)::int AS n FROM v_big').then(
            () => 'rows',
            (e: { code?: string }) => e.code ?? '',
          )
          if (outcome === '42P01') break
          await new Promise((r) => setTimeout(r, 50))
        }
        expect(outcome).toBe('42P01')
      } finally {
        await h.store.assignments.unassign(h.shop.datasourceId, assignment.id, h.shop.admin.id)
      }
    })

    it('tells the admin which relations are expanded and which fail closed, and why', async () => {
      const view = await annotateExpansion(await h.store.catalog.get(h.shop.datasourceId))
      const tables = new Map(
        (view.schemas[0]?.tables ?? []).map((t) => [t.table_name, t as Record<string, unknown>]),
      )
      expect(tables.get('orders')).not.toHaveProperty('expansion')
      expect(tables.get('v_orders')?.['expansion']).toMatchObject({
        expansion: 'expanded',
        reason: null,
      })
      expect(tables.get('v_big')?.['expansion']).toMatchObject({
        expansion: 'expanded',
        reads: expect.arrayContaining([{ schema: 'public', table: 'orders' }]),
      })
      expect(tables.get('mv_orders')?.['expansion']).toMatchObject({
        expansion: 'fail_closed',
        reason: expect.stringContaining('materialized view'),
      })
      expect(tables.get('v_ledger')?.['expansion']).toMatchObject({
        expansion: 'fail_closed',
        reason: expect.stringContaining('public.ledger'),
      })
      expect(String(tables.get('v_orders')?.['view_definition'])).toContain('public.orders')
    })
  })
}
