/**
 * A wide catalog through the data plane (docs/pgwire.md#sessions): 10,000 exposed tables (and
 * one more upstream that is not exposed), a row filter and a mask on `wide.*`. Sessions build a
 * table's rules when they first name it, so a login does not depend on the catalog's size; the
 * rules are still the right ones on a table picked at random, a policy or catalog change still
 * reaches an open session, and psql, pgjdbc and SQLAlchemy browse the whole schema.
 */
import type { Policy, SaveSchemaInput, Store } from '@palisade/store'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDataPlane, type DataPlane } from '../src/index.js'
import {
  findJava,
  findPsql,
  findPython,
  JDBC_JAR,
  parseSteps,
  run,
  stepOk,
  toolTitle,
  WIDE_JDBC,
  WIDE_PYTHON,
} from './compat/tools.js'
import { PASSWORD, SYSTEM_ACTOR } from './fixtures/seed-store.js'
import { createTestStore } from './fixtures/snapshots.js'

const TABLES = 10_000
const url = process.env['PALISADE_TEST_PG_URL']
const nameOf = (i: number) => `t${String(i).padStart(5, '0')}`
/** Two distinct tables picked at random for this run. */
const picked = Math.floor(Math.random() * (TABLES - 1)) + 1
const other = (picked % TABLES) + 1
const [psql, java, python] = [findPsql(), findJava(), findPython()]
/** A table upstream that the catalog does not expose. */
const hidden = nameOf(TABLES + 1)

function catalog(hideColumnOf?: string): SaveSchemaInput[] {
  return [
    {
      schema_name: 'wide',
      is_selected: true,
      tables: Array.from({ length: TABLES }, (_, i) => ({
        table_name: nameOf(i + 1),
        is_selected: true,
        columns: ['id', 'tenant_id', 'c2'].map((column_name, p) => ({
          column_name,
          ordinal_position: p + 1,
          data_type: p < 2 ? 'integer' : 'text',
          is_nullable: true,
          is_selected: !(column_name === 'c2' && nameOf(i + 1) === hideColumnOf),
        })),
      })),
    },
  ]
}

if (!url) {
  describe.skip('a wide catalog over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
} else {
  describe(`a wide catalog (${TABLES} tables) over PostgreSQL`, () => {
    const database = `palisade_wide_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: url })
    const clients: pg.Client[] = []
    let store: Store
    let plane: DataPlane
    let actor: string
    let datasourceId: string
    let mask: Policy

    const connect = async (user: string) => {
      const client = new pg.Client({
        host: '127.0.0.1',
        port: plane.port,
        user,
        password: PASSWORD,
        database: 'wide',
      })
      client.on('error', () => {})
      clients.push(client)
      await client.connect()
      return client
    }
    const rowsOf = async (client: pg.Client, table: string) =>
      (await client.query(`SELECT * FROM wide.${table} ORDER BY id`)).rows

    beforeAll(async () => {
      // The store starts here while the upstream's DDL runs on the PostgreSQL server.
      const opening = createTestStore({ secretKey: 'palisade-server-tests-only-key' }).then(
        (opened) => {
          store = opened
          return opened
        },
      )
      await admin.connect()
      await admin.query(`CREATE DATABASE ${database}`)
      const upstream = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, `/${database}`) })
      await upstream.connect()
      await upstream.query('CREATE SCHEMA wide')
      // Alone in its statement, so it may commit every 1,000 tables (the lock table stays small).
      await upstream.query(`
        DO $$ DECLARE i int; BEGIN
          FOR i IN SELECT generate_series(1, ${TABLES + 1}) LOOP
            EXECUTE format('CREATE TABLE wide.t%s (id int, tenant_id int, c2 text)', lpad(i::text, 5, '0'));
            IF i % 1000 = 0 THEN COMMIT; END IF;
          END LOOP;
        END $$`)
      await upstream.query(`
        INSERT INTO wide.${nameOf(picked)} VALUES (1, 1, 'one'), (2, 2, 'two'), (3, 1, 'three');
        INSERT INTO wide.${nameOf(other)} VALUES (1, 2, 'uno'), (2, 1, 'dos');`)
      await upstream.end()
      await opening
      const root = await store.users.create(
        { username: 'admin', password: PASSWORD, is_admin: true },
        SYSTEM_ACTOR,
      )
      actor = root.id
      await store.attributes.create(
        { key: 'tenant', entity_type: 'user', value_type: 'integer' },
        actor,
      )
      const users = await Promise.all(
        [1, 2].map((tenant) =>
          store.users.create(
            { username: `user${tenant}`, password: PASSWORD, attributes: { tenant } },
            actor,
          ),
        ),
      )
      const parsed = new URL(url)
      const ds = await store.datasources.create(
        {
          name: 'wide',
          ds_type: 'postgres',
          access_mode: 'open',
          pool_size: 8,
          config: {
            host: parsed.hostname,
            port: Number(parsed.port || 5432),
            database,
            username: decodeURIComponent(parsed.username || 'postgres'),
            password: parsed.password ? decodeURIComponent(parsed.password) : null,
            sslmode: 'disable',
          },
        },
        actor,
      )
      datasourceId = ds.id
      await store.catalog.saveCatalog(ds.id, catalog(), actor)
      await store.access.setUsers(ds.id, { user_ids: users.map((u) => u.id) }, actor)
      const filter = await store.policies.create(
        {
          name: 'tenant rows',
          policy_type: 'row_filter',
          targets: [{ schemas: ['wide'], tables: ['*'] }],
          filter_expression: 'tenant_id = {user.tenant}',
        },
        actor,
      )
      mask = await store.policies.create(
        {
          name: 'c2 mask',
          policy_type: 'column_mask',
          targets: [{ schemas: ['wide'], tables: ['*'], columns: ['c2'] }],
          mask_expression: "'***'",
        },
        actor,
      )
      for (const policy of [filter, mask]) {
        await store.assignments.assign(ds.id, { policy_id: policy.id, scope: 'all' }, actor)
      }
      plane = await createDataPlane({ store, port: 0, log: () => {} })
    }, 180_000)

    afterAll(async () => {
      await Promise.allSettled(clients.map((c) => c.end()))
      await plane?.close()
      await store?.close()
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await admin.end()
    })

    it('applies each user’s row filter and the mask on tables picked at random', async () => {
      const [u1, u2] = [await connect('user1'), await connect('user2')]
      expect(await rowsOf(u1, nameOf(picked))).toEqual([
        { id: 1, tenant_id: 1, c2: '***' },
        { id: 3, tenant_id: 1, c2: '***' },
      ])
      expect(await rowsOf(u2, nameOf(picked))).toEqual([{ id: 2, tenant_id: 2, c2: '***' }])
      expect(await rowsOf(u1, nameOf(other))).toEqual([{ id: 2, tenant_id: 1, c2: '***' }])
      // A join of both, by bare names through the default schema: both scans are wrapped.
      const joined = await u2.query(
        `SELECT a.c2 AS a, b.c2 AS b FROM ${nameOf(picked)} a JOIN ${nameOf(other)} b USING (tenant_id)`,
      )
      expect(joined.rows).toEqual([{ a: '***', b: '***' }])
      // Predicates see the masked value; a table that is not exposed does not exist.
      const probed = await u1.query(
        `SELECT count(*)::int AS n FROM wide.${nameOf(picked)} WHERE c2 = 'one'`,
      )
      expect(probed.rows).toEqual([{ n: 0 }])
      for (const missing of ['wide.t99999', `wide.${hidden}`])
        await expect(u1.query(`SELECT * FROM ${missing}`)).rejects.toMatchObject({ code: '42P01' })
    })

    it('brings a policy change to an open session at its next statement', async () => {
      const u1 = await connect('user1')
      expect((await rowsOf(u1, nameOf(picked)))[0]).toMatchObject({ c2: '***' })
      const changed = await store.policies.update(
        mask.id,
        { version: mask.version, mask_expression: "'###'" },
        actor,
      )
      try {
        expect((await rowsOf(u1, nameOf(picked)))[0]).toMatchObject({ c2: '###' })
        expect((await rowsOf(u1, nameOf(other)))[0]).toMatchObject({ c2: '###' })
      } finally {
        mask = await store.policies.update(
          mask.id,
          { version: changed.version, mask_expression: "'***'" },
          actor,
        )
      }
      expect((await rowsOf(u1, nameOf(picked)))[0]).toMatchObject({ c2: '***' })
    })

    it('brings a catalog change to an open session at its next statement', async () => {
      const u2 = await connect('user2')
      expect(Object.keys((await rowsOf(u2, nameOf(picked)))[0] ?? {})).toEqual([
        'id',
        'tenant_id',
        'c2',
      ])
      await store.catalog.saveCatalog(datasourceId, catalog(nameOf(picked)), actor)
      try {
        expect(await rowsOf(u2, nameOf(picked))).toEqual([{ id: 2, tenant_id: 2 }])
        await expect(u2.query(`SELECT c2 FROM wide.${nameOf(picked)}`)).rejects.toMatchObject({
          code: '42703',
        })
        expect(await rowsOf(u2, nameOf(other))).toEqual([{ id: 1, tenant_id: 2, c2: '***' }])
      } finally {
        await store.catalog.saveCatalog(datasourceId, catalog(), actor)
      }
      expect(await rowsOf(u2, nameOf(picked))).toEqual([{ id: 2, tenant_id: 2, c2: '***' }])
    })

    /** A client program's arguments: the data plane as user1 of `wide`, then the two tables. */
    const programArgs = () => [
      '127.0.0.1',
      String(plane.port),
      'wide',
      'user1',
      PASSWORD,
      nameOf(picked),
      hidden,
    ]
    const psqlLines = async (command: string) => {
      const out = await run(
        psql.ok ? psql.command : 'psql',
        [
          '-X',
          '-A',
          '-t',
          '-h',
          '127.0.0.1',
          '-p',
          String(plane.port),
          '-U',
          'user1',
          '-c',
          command,
        ],
        { PGPASSWORD: PASSWORD, PGDATABASE: 'wide', PGSSLMODE: 'disable' },
        120_000,
      )
      return { lines: out.stdout.split('\n').filter(Boolean), stderr: out.stderr }
    }

    describe.skipIf(!psql.ok)(toolTitle('psql', psql), () => {
      it('lists every exposed table with \\dt and describes one with \\d', async () => {
        const listed = await psqlLines('\\dt wide.*')
        expect(listed.stderr).toBe('')
        const tables = listed.lines.map((line) => line.split('|')[1])
        expect(tables).toHaveLength(TABLES)
        expect(tables).toContain(nameOf(picked))
        expect(tables).not.toContain(hidden)
        const described = await psqlLines(`\\d wide.${nameOf(picked)}`)
        expect(described.lines.map((line) => line.split('|')[0])).toEqual(['id', 'tenant_id', 'c2'])
        expect((await psqlLines(`\\d wide.${hidden}`)).stderr).toMatch(/Did not find any relation/)
      })
    })

    describe.skipIf(!java.ok)(toolTitle('pgjdbc', java), () => {
      it('lists the schema’s tables and columns through DatabaseMetaData', async () => {
        const out = await run(
          java.ok ? java.command : 'java',
          ['-cp', JDBC_JAR, WIDE_JDBC, ...programArgs()],
          {},
          180_000,
        )
        const steps = parseSteps(out)
        expect(stepOk(steps, 'tables', out).value).toBe(TABLES)
        expect(stepOk(steps, 'schemaColumns', out).value).toBe(TABLES * 3)
        expect(stepOk(steps, 'tableColumns', out).value).toEqual(['id', 'tenant_id', 'c2'])
        expect(stepOk(steps, 'hiddenColumns', out).value).toBe(0)
      })
    })

    describe.skipIf(!python.ok)(toolTitle('SQLAlchemy', python), () => {
      it('reflects the schema’s tables and one table', async () => {
        const out = await run(
          python.ok ? python.command : 'python3',
          [WIDE_PYTHON, ...programArgs()],
          {},
          180_000,
        )
        const steps = parseSteps(out)
        expect(stepOk(steps, 'tableNames', out).value).toBe(TABLES)
        expect(stepOk(steps, 'columns', out).value).toEqual(['id', 'tenant_id', 'c2'])
        expect(stepOk(steps, 'reflect', out).value).toEqual(['id', 'tenant_id', 'c2'])
        expect(stepOk(steps, 'hasHidden', out).value).toBe(false)
      })
    })
  })
}
