import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'

type Row = Record<string, unknown>

async function outcome(client: pg.Client, sql: string): Promise<string> {
  try {
    return JSON.stringify((await client.query(sql)).rows)
  } catch (error) {
    const e = error as { code?: string; detail?: string; hint?: string; message: string }
    return `error ${e.code}: ${e.message} ${e.detail ?? ''} ${e.hint ?? ''}`
  }
}

/** The library masks (docs/policies.md, "Named masks") through the data plane. */
export function runMaskLibraryCases(name: string, makeHarness: MakeHarness): void {
  describe(`library masks, over ${name}`, () => {
    let h: Harness
    let carol: pg.Client
    let key: string
    beforeAll(async () => {
      h = await makeHarness()
      const { store, shop } = h
      const a = shop.admin.id
      const masks: [table: string, column: string, expression: string][] = [
        ['customers', 'name', 'mask.partial(name, 1, 0)'],
        ['customers', 'email', 'mask.email(email)'],
        ['customers', 'ssn', "mask.digits(ssn, 'X')"],
        ['customers', 'tenant', 'mask.hash(tenant)'],
        ['orders', 'tenant', 'mask.hash(tenant)'],
        ['orders', 'amount', 'mask.bucket(amount, 25)'],
      ]
      for (const [table, column, expression] of masks) {
        const policy = await store.policies.create(
          {
            name: `lib-${table}-${column}`,
            policy_type: 'column_mask',
            targets: [{ schemas: ['public'], tables: [table], columns: [column] }],
            mask_expression: expression,
          },
          a,
        )
        await store.assignments.assign(
          shop.datasourceId,
          { policy_id: policy.id, scope: 'user', user_id: shop.carol.id },
          a,
        )
      }
      key = (await store.sessions.buildSessionInput('carol', 'shop')).datasource.maskKey as string
      carol = await h.connect('carol')
    })
    afterAll(() => h?.close())

    it('expands each mask into plain PostgreSQL, keeping the column type', async () => {
      const result = await carol.query('SELECT id, name, email, ssn FROM customers ORDER BY id')
      expect(result.rows).toEqual([
        { id: 1, name: 'A**', email: '***@acme.test', ssn: 'XXX-XX-XXXX' },
        { id: 2, name: 'B**', email: '***@acme.test', ssn: 'XXX-XX-XXXX' },
        { id: 3, name: 'C**', email: '***@globex.test', ssn: 'XXX-XX-XXXX' },
      ])
      const orders = await carol.query('SELECT id, amount FROM orders ORDER BY id')
      expect(orders.rows).toEqual([
        { id: 10, amount: '0' },
        { id: 11, amount: '0' },
        { id: 12, amount: '25' },
        { id: 13, amount: '25' },
      ])
      // numeric stays numeric (OID 1700), text stays text (25).
      expect(orders.fields.find((f) => f.name === 'amount')?.dataTypeID).toBe(1700)
      expect(result.fields.find((f) => f.name === 'name')?.dataTypeID).toBe(25)
    })

    it('hashes deterministically: joins and GROUP BY on the hash work, predicates see the hash', async () => {
      const tenants = (await carol.query('SELECT id, tenant FROM customers ORDER BY id'))
        .rows as Row[]
      const [acme1, acme2, globex] = tenants.map((r) => r['tenant'] as string)
      expect(acme1).toMatch(/^[0-9a-f]{64}$/)
      expect(acme2).toBe(acme1)
      expect(globex).not.toBe(acme1)
      expect(tenants.map((r) => r['tenant'])).not.toContain('acme')
      const joined = await carol.query(
        'SELECT count(*)::int AS n FROM customers c JOIN orders o ON o.tenant = c.tenant',
      )
      // acme: 2 customers × 2 orders, globex: 1 × 2.
      expect(joined.rows).toEqual([{ n: 6 }])
      const grouped = await carol.query(
        'SELECT tenant, count(*)::int AS n FROM orders GROUP BY tenant ORDER BY n, tenant',
      )
      expect(grouped.rows.map((r: Row) => r['n'])).toEqual([2, 2])
      expect(grouped.rows.map((r: Row) => r['tenant'])).toContain(acme1)
      expect((await carol.query("SELECT id FROM customers WHERE tenant = 'acme'")).rows).toEqual([])
      const byHash = await carol.query('SELECT id FROM customers WHERE tenant = $1 ORDER BY id', [
        acme1,
      ])
      expect(byHash.rows).toEqual([{ id: 1 }, { id: 2 }])
    })

    it('never lets the session see the hash key', async () => {
      expect(key).toMatch(/^[0-9a-f]{64}$/)
      const probes = [
        'EXPLAIN SELECT tenant FROM customers',
        'EXPLAIN (VERBOSE) SELECT tenant FROM customers',
        "EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM customers WHERE tenant = 'x'",
        'EXPLAIN (ANALYZE, VERBOSE) SELECT count(*) FROM orders GROUP BY tenant',
        'SELECT tenant::int FROM customers',
        'SELECT 1 / (length(tenant) - 64) FROM customers',
        'SELECT current_query()',
        'SELECT query FROM pg_stat_activity',
        'SELECT statement FROM pg_prepared_statements',
        'SELECT * FROM pg_cursors',
        "SELECT current_setting('palisade.mask_key')",
      ]
      for (const sql of probes) {
        const out = await outcome(carol, sql)
        expect(out, sql).not.toContain(key)
        expect(out.toLowerCase(), sql).not.toContain(key.slice(0, 16))
      }
      for (const sql of probes.slice(0, 3)) {
        expect(await outcome(carol, sql), sql).toMatch(/^error 42501: EXPLAIN is not available/)
      }
      // A protocol-level prepared statement and a cursor over the hashed column (their rewritten
      // text holds the key upstream), then the views that would list them.
      await carol.query({ name: 'hashed', text: 'SELECT tenant FROM customers' })
      await carol.query({ name: 'hashed', text: 'SELECT tenant FROM customers' })
      await carol.query('BEGIN')
      await carol.query('DECLARE c CURSOR FOR SELECT tenant FROM orders')
      for (const sql of [
        'SELECT statement FROM pg_prepared_statements',
        'SELECT statement FROM pg_cursors',
        'SELECT name, statement FROM pg_catalog.pg_prepared_statements',
      ]) {
        expect(await outcome(carol, sql), sql).not.toContain(key)
      }
      await carol.query('ROLLBACK')
      // EXPLAIN of tables without a hash mask still works.
      expect((await carol.query('EXPLAIN SELECT id FROM secrets')).rows.length).toBeGreaterThan(0)
    })

    it('refuses at save a mask the column cannot carry, and bad arguments, with the reason', async () => {
      const { store, shop } = h
      const attempt = async (expression: string, column = 'name', type = 'column_mask') => {
        try {
          await store.policies.create(
            {
              name: `bad-${Math.random().toString(36).slice(2)}`,
              policy_type: type as 'column_mask',
              ...(type === 'row_filter'
                ? {
                    filter_expression: expression,
                    targets: [{ schemas: ['public'], tables: ['customers'] }],
                  }
                : {
                    mask_expression: expression,
                    targets: [{ schemas: ['public'], tables: ['customers'], columns: [column] }],
                  }),
            },
            shop.admin.id,
          )
          return 'saved'
        } catch (error) {
          const e = error as { code: string; details?: { message: string }[] }
          return `${e.code}: ${e.details?.map((d) => d.message).join('; ')}`
        }
      }
      expect(await attempt('mask.bucket(name, 10)')).toMatch(
        /invalid_expression: mask\.bucket needs a numeric column, not text \(public\.customers\.name\)/,
      )
      expect(await attempt("mask.truncate(name, 'year')")).toMatch(
        /needs a date or timestamp column/,
      )
      expect(await attempt('mask.hash(id)', 'id')).toMatch(
        /mask\.hash needs a text column, not integer/,
      )
      expect(await attempt('mask.partial(name, -1, 0)')).toMatch(
        /argument 2 of mask\.partial must be an integer/,
      )
      expect(await attempt('mask.partial(name)')).toMatch(
        /mask\.partial takes the value to mask and 2 to 3 arguments/,
      )
      expect(await attempt("mask.digits(ssn, 'XY')", 'ssn')).toMatch(/one-character string/)
      expect(await attempt('mask.reveal(name)')).toMatch(/mask\.reveal is not a library mask/)
      expect(await attempt("mask.hash(tenant) = 'x'", 'tenant', 'row_filter')).toMatch(
        /belongs in a mask_expression/,
      )
      expect(await attempt("mask.constant('n/a')")).toBe('saved')
      expect(await attempt('mask.null()', 'id')).toBe('saved')
    })
  })
}
