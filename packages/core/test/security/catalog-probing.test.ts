import { expect, it } from 'vitest'
import { describeOnDatabases } from '../fixtures/databases.js'
import { makeSession, policy, run, runError } from '../fixtures/session.js'

const hideSecrets = policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } })
const denySsn = policy('column_deny', {
  target: { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
})

describeOnDatabases('catalog and existence probes reveal nothing hidden', (db) => {
  it('hides hidden tables and denied columns from information_schema', async () => {
    const session = await makeSession(db().catalog, { policies: [hideSecrets, denySsn] })
    const tables = await run<{ table_name: string }>(
      db(),
      session,
      'SELECT table_name FROM information_schema.tables',
    )
    expect(tables.map((r) => r.table_name)).not.toContain('secrets')
    const columns = await run<{ column_name: string }>(
      db(),
      session,
      "SELECT column_name FROM information_schema.columns WHERE table_name IN ('customers', 'secrets')",
    )
    expect(columns.map((r) => r.column_name)).not.toContain('ssn')
    expect(columns.map((r) => r.column_name)).not.toContain('value')
    const views = await run(db(), session, 'SELECT * FROM information_schema.views')
    expect(views).toEqual([])
  })

  it('refuses statistics, activity and catalogs outside the virtual pg_catalog', async () => {
    const session = await makeSession(db().catalog, { policies: [hideSecrets] })
    for (const sql of [
      'SELECT * FROM pg_catalog.pg_stats',
      'SELECT * FROM pg_catalog.pg_stats_ext',
      'SELECT * FROM pg_catalog.pg_depend',
      'SELECT * FROM pg_catalog.pg_shdescription',
      'SELECT * FROM pg_catalog.pg_statistic',
      'SELECT * FROM pg_catalog.pg_stat_activity',
      'SELECT * FROM information_schema.table_privileges',
    ]) {
      expect((await runError(db(), session, sql)).code, sql).toBe('42P01')
    }
  })

  it('gives a hidden table the same error as a missing one in every clause', async () => {
    const session = await makeSession(db().catalog, { policies: [hideSecrets] })
    for (const [hidden, missing] of [
      ['SELECT 1 FROM secrets', 'SELECT 1 FROM secretz'],
      ['SELECT 1 FROM public.secrets', 'SELECT 1 FROM public.secretz'],
      [
        'SELECT * FROM customers c JOIN secrets s ON true',
        'SELECT * FROM customers c JOIN secretz s ON true',
      ],
    ] as const) {
      const a = await runError(db(), session, hidden)
      const b = await runError(db(), session, missing)
      expect(a.code).toBe(b.code)
      expect(a.message.replace('secrets', 'X')).toBe(b.message.replace('secretz', 'X'))
    }
  })

  it('does not let the upstream name of an aliased schema reach an aliased table', async () => {
    const aliased = {
      schemas: db().catalog.schemas.map((s) => (s.name === 'hr' ? { ...s, alias: 'people' } : s)),
    }
    const session = await makeSession(aliased)
    expect((await runError(db(), session, 'SELECT * FROM hr.employees')).code).toBe('42P01')
    expect(await run(db(), session, 'SELECT count(*)::int AS n FROM people.employees')).toEqual([
      { n: 2 },
    ])
  })
})

describeOnDatabases('row types of tables cannot be named', (db) => {
  it('refuses casts to a table row type, hidden or visible, like a missing type', async () => {
    const session = await makeSession(db().catalog, { policies: [hideSecrets, denySsn] })
    for (const sql of [
      'SELECT NULL::secrets',
      'SELECT NULL::public.secrets',
      "SELECT (json_populate_record(NULL::customers, '{}')).*",
      'SELECT row_to_json(NULL::public.customers)',
      "SELECT * FROM json_to_record('{}') AS r(a customers)",
      'SELECT CAST(NULL AS no_such_type)',
      // Arrays of row types, of reg* types and of nothing are no way around it.
      'SELECT NULL::_secrets',
      'SELECT NULL::_customers',
      'SELECT NULL::pg_catalog._secrets',
      "SELECT '{}'::_regclass",
      'SELECT NULL::__int4',
      'SELECT NULL::_void',
    ]) {
      const error = await runError(db(), session, sql)
      expect(error.code, sql).toBe('42704')
      expect(error.message, sql).toMatch(/^type ".*" does not exist$/)
    }
  })

  it('keeps casts to built-in types working', async () => {
    const session = await makeSession(db().catalog)
    const rows = await run(
      db(),
      session,
      "SELECT '1'::int AS a, CAST('2' AS smallint) AS b, '{1}'::int[] AS c, '2026-01-01'::date::text AS d, 'x'::varchar(3) AS e",
    )
    expect(rows).toEqual([{ a: 1, b: 2, c: [1], d: '2026-01-01', e: 'x' }])
  })
})
