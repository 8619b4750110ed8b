import type { SaveSchemaInput } from '@palisade/store'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readColumns, readRelations } from '../src/upstream/upstream-catalog.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { SHOP_CATALOG } from './fixtures/shop.js'
import { upstreamOf } from './fixtures/upstream-handle.js'

/** Sizes per department: eng 5, ops 4, hr, legal and pr one each (a remainder of 3, below 4). */
const STAFF_SQL = `
CREATE TABLE public.staff (id int PRIMARY KEY, dept text, salary int NOT NULL, name text NOT NULL, ssn text NOT NULL);
INSERT INTO public.staff VALUES
  (1, 'eng', 100, 'Ada', '100-00-0001'), (2, 'eng', 110, 'Bo', '100-00-0002'),
  (3, 'eng', 120, 'Cy', '100-00-0003'), (4, 'eng', 130, 'Di', '100-00-0004'),
  (5, 'eng', 140, 'Ed', '100-00-0005'), (6, 'ops', 200, 'Fay', '100-00-0006'),
  (7, 'ops', 210, 'Gus', '100-00-0007'), (8, 'ops', 220, 'Hal', '100-00-0008'),
  (9, 'ops', 230, 'Ivy', '100-00-0009'), (10, 'hr', 300, 'Jo', '100-00-0010'),
  (11, 'legal', 400, 'Kim', '100-00-0011'), (12, 'pr', 500, 'Lu', '100-00-0012');
`

/**
 * The policy kinds about what a user may learn (docs/policies.md, "Aggregation: exact
 * rules"), end to end: saved through the store as the admin API saves them, enforced on the
 * wire in the simple and extended protocols, recorded in the query audit.
 */
export function runPolicyKindCases(name: string, makeHarness: MakeHarness): void {
  describe(`aggregation and projection policies over ${name}`, () => {
    let h: Harness
    let policyName: string
    beforeAll(async () => {
      h = await makeHarness()
      const upstream = await upstreamOf(h)
      try {
        await upstream.exec(STAFF_SQL)
        const [relation] = (await readRelations(upstream, ['public'])).filter(
          (r) => r.table_name === 'staff',
        )
        const columns = await readColumns(upstream, [{ schema: 'public', table: 'staff' }])
        const base = SHOP_CATALOG[0] as SaveSchemaInput
        const staff = {
          table_name: 'staff',
          table_type: relation?.table_type ?? null,
          primary_key: relation?.primary_key ?? null,
          is_selected: true,
          columns,
        }
        await h.store.catalog.saveCatalog(
          h.shop.datasourceId,
          [{ ...base, tables: [...base.tables, staff] }],
          h.shop.admin.id,
        )
      } finally {
        await upstream.close()
      }
      const created = await h.store.policies.create(
        {
          name: 'staff-statistics-only',
          policy_type: 'aggregation',
          targets: [{ schemas: ['public'], tables: ['staff'] }],
          min_group_size: 4,
        },
        h.shop.admin.id,
      )
      policyName = created.name
      await h.store.assignments.assign(
        h.shop.datasourceId,
        { policy_id: created.id, scope: 'user', user_id: h.shop.alice.id },
        h.shop.admin.id,
      )
      const projection = await h.store.policies.create(
        {
          name: 'ssn-filter-only',
          policy_type: 'projection',
          targets: [{ schemas: ['public'], tables: ['staff'], columns: ['ssn'] }],
        },
        h.shop.admin.id,
      )
      await h.store.assignments.assign(
        h.shop.datasourceId,
        { policy_id: projection.id, scope: 'user', user_id: h.shop.carol.id },
        h.shop.admin.id,
      )
    })
    afterAll(() => h?.close())

    const rows = async (client: pg.Client, sql: string, values?: unknown[]) =>
      (await client.query(values ? { text: sql, values } : sql)).rows

    it('answers the groups of at least four rows, the remainder of three dropped, in both protocols', async () => {
      const alice = await h.connect('alice')
      const sql =
        'SELECT dept, count(*)::int AS n, sum(salary)::int AS total FROM staff GROUP BY dept ORDER BY n DESC'
      const expected = [
        { dept: 'eng', n: 5, total: 600 },
        { dept: 'ops', n: 4, total: 860 },
      ]
      expect(await rows(alice, sql)).toEqual(expected)
      expect(await rows(alice, `${sql} LIMIT $1`, [1])).toEqual(expected.slice(0, 1))
      expect(
        await rows(alice, 'SELECT avg(salary)::int AS a FROM staff WHERE dept = $1', ['hr']),
      ).toEqual([])
    })

    it('refuses unaggregated reads and revealing aggregates without naming the policy', async () => {
      const alice = await h.connect('alice')
      for (const sql of [
        'SELECT * FROM staff',
        'SELECT name FROM staff WHERE id = 1',
        'SELECT max(salary) FROM staff',
        'SELECT sum(salary) FILTER (WHERE id = 1) FROM staff',
      ]) {
        const error = (await alice.query(sql).catch((e: unknown) => e)) as pg.DatabaseError
        expect(error.code, sql).toBe('42501')
        expect(error.message, sql).toMatch(/^aggregation policy: /)
        expect(error.message, sql).not.toContain(policyName)
      }
      // The connection stays usable.
      expect(await rows(alice, 'SELECT count(*)::int AS n FROM staff')).toEqual([{ n: 12 }])
      const audit = await h.auditRows()
      const refused = audit.find((r) => r.original_query === 'SELECT * FROM staff')
      expect(refused?.status).toBe('denied')
      expect(refused?.rewritten_query ?? null).toBeNull()
    })

    it('leaves users the aggregation policy does not apply to alone', async () => {
      const carol = await h.connect('carol')
      expect(await rows(carol, 'SELECT name FROM staff WHERE id = 1')).toEqual([{ name: 'Ada' }])
    })

    it('lets a projection-constrained column filter but never reach the result', async () => {
      const carol = await h.connect('carol')
      expect(await rows(carol, 'SELECT name FROM staff WHERE ssn = $1', ['100-00-0003'])).toEqual([
        { name: 'Cy' },
      ])
      const star = await carol.query('SELECT * FROM staff WHERE id = 1')
      expect(star.fields.map((f) => f.name)).toEqual(['id', 'dept', 'salary', 'name'])
      for (const sql of [
        'SELECT ssn FROM staff',
        'SELECT upper(ssn) FROM staff WHERE id = 1',
        'SELECT x FROM (SELECT ssn AS x FROM staff) s',
        'SELECT max(ssn) FROM staff',
      ]) {
        const error = (await carol.query(sql).catch((e: unknown) => e)) as pg.DatabaseError
        expect(error.code, sql).toBe('42501')
        expect(error.message, sql).toMatch(/projection-constrained/)
        expect(error.message, sql).not.toContain('ssn-filter-only')
      }
      // An upstream error about a value never quotes it.
      const cast = (await carol
        .query('SELECT count(*) FROM staff WHERE ssn::int = 1')
        .catch((e: unknown) => e)) as pg.DatabaseError
      expect(cast.code).toBe('22P02')
      expect(JSON.stringify(cast)).not.toContain('100-00')
    })
  })
}
