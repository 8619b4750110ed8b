import Cursor from 'pg-cursor'
import QueryStream from 'pg-query-stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from '../fixtures/harness.js'
import { PASSWORD } from '../fixtures/seed-store.js'
import {
  findJava,
  findPsql,
  findPython,
  JDBC_JAR,
  JDBC_SOURCE,
  PYTHON_SCRIPT,
  parseSteps,
  type Run,
  run,
  type StepResult,
  stepOk,
  toolTitle,
} from './tools.js'

/*
 * Real clients against the proxy, as alice: row filter tenant = 'acme' on customers and orders,
 * `email` masked to '***', `ssn` denied, table `secrets` hidden. Every tool must list and return
 * only that: customers 1 and 2, orders 10 and 11, no ssn, no secrets, and the datasource name
 * `shop` in place of the upstream database's name.
 */

const VISIBLE_TABLES = ['customers', 'orders']
const VISIBLE_CUSTOMER_COLUMNS = ['id', 'tenant', 'name', 'email']

/** The upstream database's real name, which a client must never see. */
function upstreamDatabase(h: Harness): string {
  return h.upstreamAdmin?.database ?? 'postgres'
}

/** The compat suite, run once per upstream kind. */
export function runCompatCases(name: string, makeHarness: MakeHarness): void {
  const psql = findPsql()
  const java = findJava()
  const python = findPython()

  describe(`client compatibility over ${name}`, () => {
    let h: Harness
    // The JVM and Python programs start as soon as the proxy listens and run while the psql
    // cases do; their describe blocks wait for them.
    let jdbcRun: Promise<Run> | undefined
    let pythonRun: Promise<Run> | undefined
    beforeAll(async () => {
      h = await makeHarness()
      const target = ['127.0.0.1', String(h.plane.port), 'shop', 'alice', PASSWORD]
      // Single-file source launch (Java 11+): compiles in memory, one JVM for every check.
      if (java.ok) jdbcRun = run(java.command, ['-cp', JDBC_JAR, JDBC_SOURCE, ...target])
      if (python.ok) pythonRun = run(python.command, [PYTHON_SCRIPT, ...target])
    })
    afterAll(async () => {
      await h?.close()
    })

    describe.skipIf(!psql.ok)(toolTitle('psql', psql), () => {
      /** Runs one psql command as alice: unaligned, `|`-separated, no psqlrc. */
      const sh = (command: string, tuplesOnly = true): Promise<Run> =>
        run(
          psql.ok ? psql.command : 'psql',
          [
            '-X',
            '-A',
            ...(tuplesOnly ? ['-t'] : []),
            '-F',
            '|',
            '-v',
            'ON_ERROR_STOP=1',
            '-v',
            'VERBOSITY=verbose',
            '-h',
            '127.0.0.1',
            '-p',
            String(h.plane.port),
            '-U',
            'alice',
            '-d',
            'shop',
            '-c',
            command,
          ],
          { PGPASSWORD: PASSWORD, PGSSLMODE: 'disable', PGCONNECT_TIMEOUT: '10' },
        )
      /** The `|`-separated fields of each non-empty output line; fails with psql's stderr. */
      const table = async (command: string): Promise<string[][]> => {
        const out = await sh(command)
        expect(out.stderr, `psql -c '${command}' (exit ${out.code})`).not.toMatch(/ERROR|FATAL/)
        expect(out.code).toBe(0)
        return out.stdout
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => line.split('|'))
      }

      it('SELECT returns only acme rows with the email masked', async () => {
        expect(await table('SELECT id, name, email FROM customers ORDER BY id')).toEqual([
          ['1', 'Ann', '***'],
          ['2', 'Bob', '***'],
        ])
        expect(await table('SELECT id, amount FROM orders ORDER BY id')).toEqual([
          ['10', '10.00'],
          ['11', '20.00'],
        ])
      })

      it('a denied column and a hidden table fail as if they did not exist', async () => {
        const denied = await sh('SELECT id, ssn FROM customers')
        expect(denied.code).not.toBe(0)
        expect(denied.stderr).toContain('ERROR:  42703')
        const hidden = await sh('SELECT * FROM secrets')
        expect(hidden.code).not.toBe(0)
        expect(hidden.stderr).toContain('ERROR:  42P01')
        expect(hidden.stderr).not.toContain('the recipe')
      })

      it('\\dt lists customers and orders, not secrets', async () => {
        const rows = await table('\\dt')
        expect(rows.map((r) => [r[0], r[1], r[2]])).toEqual([
          ['public', 'customers', 'table'],
          ['public', 'orders', 'table'],
        ])
      })

      it('\\d lists the visible relations only', async () => {
        const rows = await table('\\d')
        expect(rows.map((r) => r[1])).toEqual(VISIBLE_TABLES)
      })

      it('\\d customers shows id, tenant, name, email and no ssn', async () => {
        const out = await sh('\\d customers', false)
        expect(out.stderr).toBe('')
        expect(out.code).toBe(0)
        const lines = out.stdout.split('\n')
        expect(lines[0]).toBe('Table "public.customers"')
        expect(lines[1]).toBe('Column|Type|Collation|Nullable|Default')
        expect(lines.slice(2, 6)).toEqual([
          'id|integer||not null|',
          'tenant|text||not null|',
          'name|text|||',
          'email|text|||',
        ])
        expect(out.stdout).not.toContain('ssn')
        expect(out.stdout).toContain('"customers_pkey" PRIMARY KEY, btree (id)')
        // Foreign keys that reference it (psql asks pg_partition_ancestors for these). Upstream
        // sessions run with an empty search path, so regclass output is schema-qualified.
        expect(out.stdout).toContain('TABLE "public.orders" CONSTRAINT "orders_customer_id_fkey"')
      })

      it('\\d secrets finds no relation', async () => {
        const out = await sh('\\d secrets')
        expect(out.stdout).toBe('')
        expect(out.stderr).toContain('Did not find any relation named "secrets"')
      })

      it('\\dn lists public and no system schema', async () => {
        const rows = await table('\\dn')
        expect(rows.map((r) => r[0])).toEqual(['public'])
      })

      it('\\dv finds no views', async () => {
        const out = await sh('\\dv')
        expect(out.code).toBe(0)
        expect(out.stdout).toBe('')
        expect(out.stderr).toContain('Did not find any relations.')
      })

      it('\\df lists no user functions', async () => {
        const rows = await table('\\df')
        for (const row of rows) expect(['pg_catalog', 'information_schema']).toContain(row[0])
      })

      it('\\l shows the datasource name shop, not the upstream database', async () => {
        const names = (await table('\\l')).map((r) => r[0])
        expect(names).toContain('shop')
        expect(names).not.toContain(upstreamDatabase(h))
      })

      it('\\conninfo names the datasource and user', async () => {
        const out = await sh('\\conninfo')
        expect(out.code).toBe(0)
        expect(out.stdout.trim()).toBe(
          `You are connected to database "shop" as user "alice" on host "127.0.0.1" at port "${h.plane.port}".`,
        )
      })
    })

    describe.skipIf(!java.ok)(toolTitle('pgjdbc', java), () => {
      let out: Run
      let steps: Map<string, StepResult>
      beforeAll(async () => {
        if (!jdbcRun) return
        out = await jdbcRun
        steps = parseSteps(out)
      })
      const ok = (step: string) => stepOk(steps, step, out)

      it('connects (startup SETs accepted)', () => {
        const [product] = ok('connect').rows
        expect(product?.[0]).toBe('PostgreSQL')
        expect(product?.[1]).toMatch(/^\d+/)
      })

      it('getTables lists customers and orders, not secrets', () => {
        expect(ok('tables').rows).toEqual([
          ['public', 'customers'],
          ['public', 'orders'],
        ])
      })

      it('getColumns lists customers without ssn', () => {
        expect(ok('columns').rows).toEqual([
          ['id', 'int4', 1],
          ['tenant', 'text', 2],
          ['name', 'text', 3],
          ['email', 'text', 4],
        ])
      })

      it('getSchemas lists public and no hidden schema', () => {
        const schemas = ok('schemas').rows.map((r) => r[0])
        expect(schemas).toContain('public')
        expect(
          schemas.filter((s) => !['pg_catalog', 'information_schema'].includes(String(s))),
        ).toEqual(['public'])
      })

      it('getPrimaryKeys finds customers.id', () => {
        expect(ok('primaryKeys').rows).toEqual([['id', 1]])
      })

      it('a PreparedStatement (unnamed, then server-prepared) returns acme rows masked', () => {
        expect(ok('prepared').rows).toEqual([
          ['1', 'Ann', '***'],
          ['2', 'Bob', '***'],
        ])
      })

      it('a server-side cursor with fetchSize 1 returns the acme orders', () => {
        expect(ok('cursor').rows).toEqual([
          ['10', '10.00'],
          ['11', '20.00'],
        ])
      })

      it('a denied column and a hidden table fail with 42703 and 42P01', () => {
        expect(steps.get('deniedColumn')).toMatchObject({ ok: false, sqlState: '42703' })
        expect(steps.get('hiddenTable')).toMatchObject({ ok: false, sqlState: '42P01' })
      })
    })

    describe.skipIf(!python.ok)(toolTitle('psycopg2 + SQLAlchemy', python), () => {
      let out: Run
      let steps: Map<string, StepResult>
      beforeAll(async () => {
        if (!pythonRun) return
        out = await pythonRun
        steps = parseSteps(out)
      })
      const ok = (step: string) => stepOk(steps, step, out)

      it('connects through a SQLAlchemy engine', () => {
        expect(ok('connect').value).toMatchObject({ default_schema_name: 'public' })
      })

      it('inspect().get_table_names() lists customers and orders, not secrets', () => {
        expect(ok('tableNames').value).toEqual(VISIBLE_TABLES)
      })

      it('inspect().get_schema_names() lists public', () => {
        expect(ok('schemaNames').value).toEqual(['information_schema', 'public'])
      })

      it("inspect().get_columns('customers') has no ssn", () => {
        expect(ok('columns').value).toEqual([
          { name: 'id', type: 'INTEGER', nullable: false },
          { name: 'tenant', type: 'TEXT', nullable: false },
          { name: 'name', type: 'TEXT', nullable: true },
          { name: 'email', type: 'TEXT', nullable: true },
        ])
      })

      it("inspect().get_pk_constraint('customers') is customers_pkey on id", () => {
        expect(ok('pk').value).toEqual({ constrained_columns: ['id'], name: 'customers_pkey' })
      })

      it('a %s-parameterised psycopg2 query returns acme rows masked', () => {
        expect(ok('parameterised').value).toEqual([
          [1, 'Ann', '***'],
          [2, 'Bob', '***'],
        ])
        expect(ok('ordersTotal').value).toEqual([[2, '30.00']])
      })

      it('a denied column and a hidden table fail with 42703 and 42P01', () => {
        expect(steps.get('deniedColumn')).toMatchObject({ ok: false, sqlState: '42703' })
        expect(steps.get('hiddenTable')).toMatchObject({ ok: false, sqlState: '42P01' })
      })
    })

    describe('node-postgres', () => {
      it('parameterised queries (extended protocol, unnamed and named) are policy-correct', async () => {
        const alice = await h.connect('alice')
        const unnamed = await alice.query(
          'SELECT id, name, email FROM customers WHERE id >= $1 AND name <> $2 ORDER BY id',
          [1, 'nobody'],
        )
        expect(unnamed.fields.map((f) => f.name)).toEqual(['id', 'name', 'email'])
        expect(unnamed.rows).toEqual([
          { id: 1, name: 'Ann', email: '***' },
          { id: 2, name: 'Bob', email: '***' },
        ])
        const named = {
          name: 'orders_over',
          text: 'SELECT id FROM orders WHERE amount > $1 ORDER BY id',
        }
        expect((await alice.query({ ...named, values: [15] })).rows).toEqual([{ id: 11 }])
        expect((await alice.query({ ...named, values: [5] })).rows).toEqual([
          { id: 10 },
          { id: 11 },
        ])
        const star = await alice.query('SELECT * FROM customers WHERE id = ANY($1::int[])', [
          [1, 3],
        ])
        expect(star.fields.map((f) => f.name)).toEqual(VISIBLE_CUSTOMER_COLUMNS)
        expect(star.rows).toEqual([{ id: 1, tenant: 'acme', name: 'Ann', email: '***' }])
      })

      it('pg-cursor reads the acme orders in batches of one', async () => {
        const alice = await h.connect('alice')
        const cursor = alice.query(
          new Cursor('SELECT id, amount FROM orders WHERE id > $1 ORDER BY id', [0]),
        )
        const batches: unknown[][] = []
        for (;;) {
          const batch = await cursor.read(1)
          if (batch.length === 0) break
          batches.push(batch)
        }
        await cursor.close()
        expect(batches).toEqual([[{ id: 10, amount: '10.00' }], [{ id: 11, amount: '20.00' }]])
        // The connection is usable after the cursor.
        expect((await alice.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([
          { n: 2 },
        ])
      })

      it('pg-query-stream streams 100000 rows in batches', async () => {
        const alice = await h.connect('alice')
        const stream = alice.query(
          new QueryStream('SELECT g FROM generate_series(1, $1::int) AS g', [100_000], {
            batchSize: 1000,
          }),
        )
        let count = 0
        let sum = 0
        let last = 0
        for await (const row of stream as AsyncIterable<{ g: number }>) {
          count++
          sum += row.g
          last = row.g
        }
        expect({ count, sum, last }).toEqual({ count: 100_000, sum: 5_000_050_000, last: 100_000 })
      })

      it('pg-query-stream over a filtered join returns only acme rows', async () => {
        const alice = await h.connect('alice')
        const stream = alice.query(
          new QueryStream(
            `SELECT o.id, c.name, c.email FROM orders o JOIN customers c ON c.id = o.customer_id,
               generate_series(1, $1::int) AS g ORDER BY o.id, g`,
            [5000],
            { batchSize: 500 },
          ),
        )
        const counts = new Map<string, number>()
        for await (const row of stream as AsyncIterable<{
          id: number
          name: string
          email: string
        }>) {
          const key = `${row.id}|${row.name}|${row.email}`
          counts.set(key, (counts.get(key) ?? 0) + 1)
        }
        expect(Object.fromEntries(counts)).toEqual({ '10|Ann|***': 5000, '11|Bob|***': 5000 })
      })
    })
  })
}
