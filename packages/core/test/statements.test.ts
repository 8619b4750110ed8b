import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../src/catalog.types.js'
import { rewrite } from '../src/rewrite.js'
import type { CompiledSession } from '../src/session/compiled-session.js'
import { explainPlan } from './fixtures/explain.js'
import { createShopDb, readCatalog } from './fixtures/pglite.js'
import { makeSession, policy, run, runError } from './fixtures/session.js'

let db: PGlite
let catalog: Catalog
let session: CompiledSession

const tenantFilter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['orders'] },
  filterExpression: 'tenant_id = {user.tenant}',
})

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
  session = await makeSession(catalog, { policies: [tenantFilter] })
})
afterAll(() => db.close())

const readOnly = {
  code: '25006',
  message: 'Only read-only queries are allowed',
  auditStatus: 'denied',
}

describe('the read-only allowlist (docs/statements.md)', () => {
  it.each([
    'INSERT INTO orders VALUES (7, 1, 1, 1, $$x$$, null, now())',
    'UPDATE orders SET amount = 0',
    'DELETE FROM orders',
    'MERGE INTO orders o USING products p ON o.id = p.id WHEN MATCHED THEN DELETE',
    'DROP TABLE orders',
    'CREATE TABLE x (a int)',
    'TRUNCATE orders',
    'GRANT SELECT ON orders TO public',
    'COPY orders TO STDOUT',
    'COPY orders FROM STDIN',
    'DO $$ BEGIN END $$',
    'CALL p()',
    'LISTEN x',
    'NOTIFY x',
    'LOCK orders',
    'VACUUM orders',
    'SELECT * INTO copy_of_orders FROM orders',
    'SELECT * FROM orders FOR UPDATE',
    'SELECT * FROM (SELECT * FROM orders FOR SHARE) x',
    'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d',
    'DISCARD ALL',
    'PREPARE p AS SELECT 1',
    'EXECUTE p',
    'SET search_path TO hr',
    'SET search_path = public',
    'SET LOCAL application_name = x',
    'SET ROLE postgres',
    'SET SESSION AUTHORIZATION postgres',
    'SET TRANSACTION READ WRITE',
    'SET statement_timeout = 0',
    'SET DateStyle = ISO',
    "SET client_encoding = 'LATIN1'",
    'SET extra_float_digits = 0',
    'RESET ALL',
    'BEGIN READ WRITE',
    'START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE',
    'EXPLAIN DELETE FROM orders',
    'INSERT INTO no_such_table VALUES (1)',
    'PREPARE TRANSACTION $$x$$',
  ])('rejects %s with 25006', (sql) => {
    expect(() => rewrite(sql, session)).toThrow(expect.objectContaining(readOnly))
  })

  it('rejects the whole input when any statement of a multi-statement message is rejected', () => {
    expect(() => rewrite('SELECT 1; DELETE FROM orders; SELECT 2', session)).toThrow(
      expect.objectContaining({ code: '25006' }),
    )
  })

  it('rewrites every statement of a multi-statement message', async () => {
    const { statements } = rewrite(
      'SELECT count(*) FROM orders; SELECT count(*) FROM customers',
      session,
    )
    expect(statements).toHaveLength(2)
    expect(statements.map((s) => s.statementType)).toEqual(['SELECT', 'SELECT'])
    expect(await run(db, session, 'SELECT 1 AS a; SELECT count(*)::int AS n FROM orders')).toEqual([
      { n: 3 },
    ])
  })

  it('accepts presentation SETs that drivers send', () => {
    for (const sql of [
      "SET application_name = 'psql'",
      'SET extra_float_digits = 3',
      "SET client_encoding TO 'UTF8'",
      'SET client_min_messages = warning',
      'RESET application_name',
      'SET SESSION application_name TO DEFAULT',
    ]) {
      expect(rewrite(sql, session).statements[0]?.kind, sql).toBe('set')
    }
    expect(rewrite("SET application_name = 'etl'", session).statements[0]?.setting).toEqual({
      name: 'application_name',
      value: 'etl',
    })
  })

  it('forces BEGIN and START TRANSACTION to READ ONLY', async () => {
    const [begin] = rewrite('BEGIN', session).statements
    expect(begin?.sql).toBe('BEGIN READ ONLY')
    await db.query(begin?.sql ?? '')
    await expect(db.query('INSERT INTO public.tenants VALUES (9, $$x$$)')).rejects.toThrow(
      /read-only transaction/,
    )
    await db.query('ROLLBACK')
    expect(
      rewrite('START TRANSACTION ISOLATION LEVEL REPEATABLE READ', session).statements[0]?.sql,
    ).toMatch(/READ ONLY/)
    for (const sql of ['COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT a', 'RELEASE a', 'ROLLBACK TO a']) {
      expect(rewrite(sql, session).statements[0]?.kind, sql).toBe('transaction')
    }
  })

  it('keeps AND CHAIN on COMMIT and ROLLBACK: the chained transaction stays READ ONLY', async () => {
    const sql = (text: string) => rewrite(text, session).statements[0]?.sql ?? ''
    expect(sql('COMMIT AND CHAIN')).toBe('COMMIT AND CHAIN')
    expect(sql('ROLLBACK AND CHAIN')).toBe('ROLLBACK AND CHAIN')
    expect(sql('END AND CHAIN')).toBe('COMMIT AND CHAIN')
    expect(sql('COMMIT AND NO CHAIN')).toBe('COMMIT')
    await db.query(sql('BEGIN ISOLATION LEVEL REPEATABLE READ'))
    await db.query(sql('COMMIT AND CHAIN'))
    const chained = await db.query<{ ro: string; iso: string }>(
      "SELECT current_setting('transaction_read_only') AS ro, current_setting('transaction_isolation') AS iso",
    )
    expect(chained.rows).toEqual([{ ro: 'on', iso: 'repeatable read' }])
    await expect(db.query('INSERT INTO public.tenants VALUES (9, $$x$$)')).rejects.toThrow(
      /read-only transaction/,
    )
    await db.query(sql('ROLLBACK AND CHAIN'))
    const again = await db.query<{ ro: string }>(
      "SELECT current_setting('transaction_read_only') AS ro",
    )
    expect(again.rows).toEqual([{ ro: 'on' }])
    await db.query('ROLLBACK')
  })

  it('rewrites EXPLAIN of a query and rejects EXPLAIN ANALYZE with 0A000', async () => {
    const { shown, full } = await explainPlan(db, session, 'EXPLAIN SELECT * FROM orders')
    expect(full).toMatch(/tenant_id = 1/)
    expect(shown).not.toMatch(/tenant_id = 1/)
    expect(shown).toContain('(row policy)')
    expect(() => rewrite('EXPLAIN ANALYZE SELECT * FROM orders', session)).toThrow(
      expect.objectContaining({ code: '0A000' }),
    )
    expect(() => rewrite('EXPLAIN (ANALYZE, BUFFERS) SELECT 1', session)).toThrow(
      expect.objectContaining({ code: '0A000' }),
    )
    expect(rewrite('EXPLAIN (ANALYZE false) SELECT 1', session).statements[0]?.kind).toBe('explain')
  })

  it('rewrites the query of a cursor and passes FETCH, MOVE and CLOSE', async () => {
    await db.query('BEGIN')
    try {
      await run(db, session, 'DECLARE c CURSOR FOR SELECT id FROM orders ORDER BY id')
      expect(await run(db, session, 'FETCH 10 FROM c')).toEqual([{ id: 1 }, { id: 3 }, { id: 5 }])
      await run(db, session, 'MOVE FIRST IN c')
      await run(db, session, 'CLOSE c')
    } finally {
      await db.query('ROLLBACK')
    }
  })

  it('answers SHOW from the fixed set and 42704 for anything else', async () => {
    expect(await run(db, session, 'SHOW search_path')).toEqual([{ search_path: 'public' }])
    expect((await run(db, session, 'SHOW standard_conforming_strings'))[0]).toEqual({
      standard_conforming_strings: 'on',
    })
    const all = await run<{ name: string }>(db, session, 'SHOW ALL')
    expect(all.map((r) => r.name)).toContain('server_version')
    expect(all.map((r) => r.name)).not.toContain('data_directory')
    expect(await runError(db, session, 'SHOW data_directory')).toEqual({
      code: '42704',
      message: 'unrecognized configuration parameter "data_directory"',
    })
    const tables = await run<{ table_name: string }>(db, session, 'SHOW TABLES')
    expect(tables.map((r) => r.table_name)).toContain('orders')
  })

  it('passes DEALLOCATE through and returns no statements for empty input', () => {
    expect(rewrite('DEALLOCATE ALL', session).statements[0]?.kind).toBe('deallocate')
    expect(rewrite('', session).statements).toEqual([])
    expect(rewrite('  ;  -- nothing\n', session).statements).toEqual([])
  })

  it('substitutes the Palisade identity for current_user, session_user and current_database()', async () => {
    const rows = await run(
      db,
      session,
      'SELECT current_user, session_user, current_database(), current_catalog',
    )
    expect(rows).toEqual([
      {
        current_user: 'alice',
        session_user: 'alice',
        current_database: 'shop',
        current_catalog: 'shop',
      },
    ])
  })
})
