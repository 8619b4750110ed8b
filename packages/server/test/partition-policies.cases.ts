import type { SaveSchemaInput } from '@palisade/store'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readColumns, readRelations } from '../src/upstream/upstream-catalog.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { SHOP_CATALOG } from './fixtures/shop.js'
import { upstreamOf } from './fixtures/upstream-handle.js'

/**
 * Partitions and inheritance children with policies of their own, under a parent that has
 * none: events by tenant, logs by region then tenant (one partition not exposed), and
 * animals with classic inheritance three deep.
 */
const HIERARCHY_SQL = `
CREATE TABLE public.events (id int, tenant text NOT NULL, note text) PARTITION BY LIST (tenant);
CREATE TABLE public.events_acme PARTITION OF public.events FOR VALUES IN ('acme');
CREATE TABLE public.events_globex PARTITION OF public.events FOR VALUES IN ('globex');
INSERT INTO public.events VALUES (1, 'acme', 'acme note'), (2, 'globex', 'globex note');
CREATE VIEW public.v_events AS SELECT id, tenant, note FROM public.events;
CREATE TABLE public.logs (id int, tenant text NOT NULL, region text NOT NULL, msg text)
  PARTITION BY LIST (region);
CREATE TABLE public.logs_eu PARTITION OF public.logs FOR VALUES IN ('eu') PARTITION BY LIST (tenant);
CREATE TABLE public.logs_eu_acme PARTITION OF public.logs_eu FOR VALUES IN ('acme');
CREATE TABLE public.logs_eu_globex PARTITION OF public.logs_eu FOR VALUES IN ('globex');
CREATE TABLE public.logs_us PARTITION OF public.logs FOR VALUES IN ('us');
INSERT INTO public.logs VALUES (1, 'acme', 'eu', 'a'), (2, 'globex', 'eu', 'g'), (3, 'globex', 'us', 'u');
CREATE TABLE public.animals (id int, tenant text, name text, email text);
CREATE TABLE public.dogs (breed text) INHERITS (public.animals);
CREATE TABLE public.puppies () INHERITS (public.dogs);
CREATE TABLE public.cats () INHERITS (public.animals);
INSERT INTO public.animals VALUES (1, 'acme', 'generic', 'gen@x.test');
INSERT INTO public.dogs VALUES (2, 'acme', 'rex', 'dog@x.test', 'collie');
INSERT INTO public.puppies VALUES (3, 'acme', 'tiny', 'pup@x.test', 'pug');
INSERT INTO public.cats VALUES (4, 'acme', 'tom', 'cat@x.test');
CREATE TABLE public.gstest3 (a int PRIMARY KEY, b int, c int, d int);
INSERT INTO public.gstest3 VALUES (1, 1, 1, 1), (2, 2, 2, 2);
CREATE FUNCTION public.twice(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';
CREATE VIEW public.v_twice AS SELECT id, public.twice(id) AS d FROM public.animals;
`
const TABLES = [
  'events',
  'events_acme',
  'events_globex',
  'v_events',
  'logs',
  'logs_eu',
  'logs_eu_acme',
  'logs_eu_globex',
  'logs_us',
  'animals',
  'dogs',
  'puppies',
  'cats',
  'gstest3',
  'v_twice',
]
/** Saved with its ancestors but not exposed: its policies still hold through its parents. */
const UNEXPOSED = new Set(['logs_eu_globex'])

/** A policy on a partition or child holds on every path to its rows (docs/policies.md). */
export function runPartitionPolicyCases(name: string, makeHarness: MakeHarness): void {
  describe(`policies of partitions and inheritance children over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
      const upstream = await upstreamOf(h)
      try {
        await upstream.exec(HIERARCHY_SQL)
        const relations = await readRelations(upstream, ['public'])
        const columns = await readColumns(
          upstream,
          TABLES.map((table) => ({ schema: 'public', table })),
        )
        const base = SHOP_CATALOG[0] as SaveSchemaInput
        const tables = TABLES.map((table) => {
          const relation = relations.find((r) => r.table_name === table)
          return {
            table_name: table,
            table_type: relation?.table_type ?? null,
            view_definition: relation?.view_definition ?? null,
            view_reads: relation?.view_reads ?? null,
            ancestors: relation?.ancestors ?? null,
            primary_key: relation?.primary_key ?? null,
            is_selected: !UNEXPOSED.has(table),
            columns: columns.filter((c) => c.table_name === table),
          }
        })
        await h.store.catalog.saveCatalog(
          h.shop.datasourceId,
          [{ ...base, tables: [...base.tables, ...tables] }],
          h.shop.admin.id,
        )
      } finally {
        await upstream.close()
      }
      const target = (tables: string[], columns?: string[]) => [
        { schemas: ['public'], tables, ...(columns ? { columns } : {}) },
      ]
      const policies = [
        {
          name: 'partition-tenant',
          policy_type: 'row_filter' as const,
          targets: target(['events_*', 'logs_eu_*']),
          filter_expression: 'tenant = {user.tenant}',
        },
        {
          name: 'dog-email-mask',
          policy_type: 'column_mask' as const,
          targets: target(['dogs'], ['email']),
          mask_expression: "'***'",
        },
        {
          name: 'cat-name-deny',
          policy_type: 'column_deny' as const,
          targets: target(['cats'], ['name']),
        },
        { name: 'puppies-hide', policy_type: 'table_deny' as const, targets: target(['puppies']) },
      ]
      for (const input of policies) {
        const created = await h.store.policies.create(input, h.shop.admin.id)
        await h.store.assignments.assign(
          h.shop.datasourceId,
          { policy_id: created.id, scope: 'user', user_id: h.shop.alice.id },
          h.shop.admin.id,
        )
      }
    })
    afterAll(() => h?.close())

    const rows = async (client: pg.Client, sql: string) => (await client.query(sql)).rows

    it("keeps a partition's row filter when the parent is read", async () => {
      const alice = await h.connect('alice')
      expect(await rows(alice, 'SELECT id, note FROM events_globex')).toEqual([])
      expect(await rows(alice, 'SELECT id, note FROM events ORDER BY id')).toEqual([
        { id: 1, note: 'acme note' },
      ])
      expect(
        await rows(alice, "SELECT count(*)::int AS n FROM events WHERE note LIKE 'glo%'"),
      ).toEqual([{ n: 0 }])
      expect(await rows(alice, 'SELECT id FROM ONLY events')).toEqual([])
      const extended = await alice.query({
        text: 'SELECT id, note FROM events WHERE id = $1',
        values: [2],
      })
      expect(extended.rows).toEqual([])
    })

    it('keeps it through views, joins, subqueries and system columns', async () => {
      const alice = await h.connect('alice')
      expect(await rows(alice, 'SELECT id, note FROM v_events ORDER BY id')).toEqual([
        { id: 1, note: 'acme note' },
      ])
      expect(
        await rows(
          alice,
          'SELECT e.id, o.id AS order_id FROM events e JOIN orders o ON o.tenant = e.tenant ORDER BY 1, 2',
        ),
      ).toEqual([
        { id: 1, order_id: 10 },
        { id: 1, order_id: 11 },
      ])
      expect(
        await rows(alice, "SELECT (SELECT string_agg(note, ',') FROM events) AS notes"),
      ).toEqual([{ notes: 'acme note' }])
      expect(
        await rows(
          alice,
          'SELECT id FROM orders WHERE tenant IN (SELECT tenant FROM events) ORDER BY id',
        ),
      ).toEqual([{ id: 10 }, { id: 11 }])
      expect(
        await rows(
          alice,
          'SELECT tableoid::regclass::text AS part, id, ctid IS NOT NULL AS c FROM events',
        ),
      ).toEqual([{ part: 'public.events_acme', id: 1, c: true }])
    })

    it('keeps the row filter of a partition two levels down, exposed or not', async () => {
      const alice = await h.connect('alice')
      expect(await rows(alice, 'SELECT id, msg FROM logs ORDER BY id')).toEqual([
        { id: 1, msg: 'a' },
        { id: 3, msg: 'u' },
      ])
      expect(await rows(alice, 'SELECT id FROM logs_eu ORDER BY id')).toEqual([{ id: 1 }])
      expect(await rows(alice, "SELECT count(*)::int AS n FROM logs WHERE msg = 'g'")).toEqual([
        { n: 0 },
      ])
    })

    it("applies a child's masks, column denies and table deny through its parents", async () => {
      const alice = await h.connect('alice')
      expect(await rows(alice, 'SELECT id, name, email FROM animals ORDER BY id')).toEqual([
        { id: 1, name: 'generic', email: 'gen@x.test' },
        { id: 2, name: 'rex', email: '***' },
        { id: 4, name: null, email: 'cat@x.test' },
      ])
      expect(await rows(alice, 'SELECT id, email FROM dogs ORDER BY id')).toEqual([
        { id: 2, email: '***' },
      ])
      // The hidden values really are absent: no predicate finds them.
      for (const sql of [
        "SELECT count(*)::int AS n FROM animals WHERE email = 'dog@x.test'",
        "SELECT count(*)::int AS n FROM animals WHERE name = 'tom'",
        'SELECT count(*)::int AS n FROM animals WHERE id = 3',
        "SELECT count(*)::int AS n FROM dogs WHERE breed = 'pug'",
      ])
        expect(await rows(alice, sql)).toEqual([{ n: 0 }])
      expect(await rows(alice, 'SELECT id FROM ONLY animals')).toEqual([{ id: 1 }])
    })

    it('reads system columns of a parent joined with the virtual pg_class', async () => {
      const carol = await h.connect('carol')
      expect(
        await rows(
          carol,
          'SELECT relname, a.* FROM animals a, pg_class WHERE a.tableoid = pg_class.oid ORDER BY a.id',
        ),
      ).toEqual([
        { relname: 'animals', id: 1, tenant: 'acme', name: 'generic', email: 'gen@x.test' },
        { relname: 'dogs', id: 2, tenant: 'acme', name: 'rex', email: 'dog@x.test' },
        { relname: 'puppies', id: 3, tenant: 'acme', name: 'tiny', email: 'pup@x.test' },
        { relname: 'cats', id: 4, tenant: 'acme', name: 'tom', email: 'cat@x.test' },
      ])
      const alice = await h.connect('alice')
      expect(
        await rows(
          alice,
          'SELECT c.relname, a.id, a.xmin IS NOT NULL AS x FROM animals a JOIN pg_class c ON c.oid = a.tableoid ORDER BY a.id',
        ),
      ).toEqual([
        { relname: 'animals', id: 1, x: true },
        { relname: 'dogs', id: 2, x: true },
        { relname: 'cats', id: 4, x: true },
      ])
    })

    it('groups by a key in every grouping set as PostgreSQL does', async () => {
      const carol = await h.connect('carol')
      expect(
        await rows(
          carol,
          'SELECT a, d, grouping(a, b, c) AS g FROM gstest3 GROUP BY GROUPING SETS ((a, b), (a, c)) ORDER BY 1, 3',
        ),
      ).toEqual([
        { a: 1, d: 1, g: 1 },
        { a: 1, d: 1, g: 2 },
        { a: 2, d: 2, g: 1 },
        { a: 2, d: 2, g: 2 },
      ])
    })

    it('says a view calls a function that is not allowed, instead of answering as missing', async () => {
      const alice = await h.connect('alice')
      const error = await alice.query('SELECT * FROM v_twice').then(
        () => undefined,
        (e: { code?: string; message: string }) => e,
      )
      expect(error).toMatchObject({
        code: '42501',
        message: 'view "v_twice" calls a function that is not allowed through Palisade',
      })
    })

    it('leaves users without those policies reading every row', async () => {
      const carol = await h.connect('carol')
      expect(await rows(carol, 'SELECT count(*)::int AS n FROM events')).toEqual([{ n: 2 }])
      expect(await rows(carol, 'SELECT count(*)::int AS n FROM logs')).toEqual([{ n: 3 }])
      expect(await rows(carol, 'SELECT count(*)::int AS n FROM animals')).toEqual([{ n: 4 }])
    })
  })
}
