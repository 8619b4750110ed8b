import { expect, it } from 'vitest'
import { describeOnDatabases } from '../fixtures/databases.js'
import { makeSession, policy, run, runError } from '../fixtures/session.js'

const hideSecrets = policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } })

describeOnDatabases(
  'functions that execute SQL, read files or change settings are refused',
  (db) => {
    it.each([
      ["query_to_xml('select * from public.secrets', true, true, '')", 'query_to_xml'],
      ["query_to_xml_and_xmlschema('select 1', true, true, '')", 'query_to_xml_and_xmlschema'],
      ["table_to_xml('public.secrets', true, true, '')", 'table_to_xml'],
      ["ts_stat('select 1')", 'ts_stat'],
      ["pg_read_file('/etc/passwd')", 'pg_read_file'],
      ["pg_read_binary_file('/etc/passwd')", 'pg_read_binary_file'],
      ["pg_ls_dir('.')", 'pg_ls_dir'],
      ["set_config('search_path', 'hr', false)", 'set_config'],
      ["current_setting('data_directory')", 'current_setting'],
      ["lo_import('/etc/passwd')", 'lo_import'],
      ['inet_server_addr()', 'inet_server_addr'],
      ["to_regclass('public.secrets')", 'to_regclass'],
      ['pg_sleep(10)', 'pg_sleep'],
      ['pg_advisory_lock(1)', 'pg_advisory_lock'],
      ["nextval('public.orders_id_seq')", 'nextval'],
      ["pg_catalog.pg_read_file('/etc/passwd')", 'pg_read_file'],
      ['txid_current()', 'txid_current'],
      ['pg_current_xact_id()', 'pg_current_xact_id'],
      ['pg_backend_pid()', 'pg_backend_pid'],
      ["has_table_privilege('public.secrets', 'select')", 'has_table_privilege'],
      ['pg_stat_get_live_tuples(1)', 'pg_stat_get_live_tuples'],
      ["record_in('(1)', 16384, -1)", 'record_in'],
      ['regclassout(16384)', 'regclassout'],
      ["pg_input_is_valid('(1)', 'secrets')", 'pg_input_is_valid'],
    ])('refuses the built-in %s with 42501 and the reason', async (call, name) => {
      const session = await makeSession(db().catalog, { policies: [hideSecrets] })
      const error = await runError(db(), session, `SELECT ${call} FROM customers`)
      expect(error).toEqual({
        code: '42501',
        message: `function ${name} is not allowed through Palisade`,
      })
    })

    it.each([
      ["dblink('dbname=x', 'select 1')", 'dblink'],
      ['public.lower(name)', 'public.lower'],
      ["pg_catalog.no_such_function('x')", 'pg_catalog.no_such_function'],
      ["information_schema.pg_read_file('x')", 'information_schema.pg_read_file'],
    ])('answers %s, not a built-in, as missing (42883)', async (call, name) => {
      const session = await makeSession(db().catalog, { policies: [hideSecrets] })
      const error = await runError(db(), session, `SELECT ${call} FROM customers`)
      expect(error.code).toBe('42883')
      expect(error.message).toMatch(
        new RegExp(`^function ${name.replace('.', '\\.')}\\(.*\\) does not exist$`),
      )
    })

    it('refuses functions in FROM and inside subqueries the same way', async () => {
      const session = await makeSession(db().catalog)
      expect((await runError(db(), session, "SELECT * FROM pg_ls_dir('.')")).code).toBe('42501')
      expect((await runError(db(), session, "SELECT (SELECT pg_read_file('x'))")).code).toBe(
        '42501',
      )
      expect(
        (
          await runError(
            db(),
            session,
            "SELECT 1 WHERE EXISTS (SELECT set_config('a.b', 'c', false))",
          )
        ).code,
      ).toBe('42501')
    })

    it('checks object-name casts against the visible catalog', async () => {
      const session = await makeSession(db().catalog, { policies: [hideSecrets] })
      expect(await runError(db(), session, "SELECT 'public.secrets'::regclass")).toEqual({
        code: '42P01',
        message: 'relation "public.secrets" does not exist',
      })
      expect(await runError(db(), session, "SELECT 'secrets'::regclass")).toEqual(
        await runError(db(), session, "SELECT 'secretz'::regclass").then((e) => ({
          ...e,
          message: e.message.replace('secretz', 'secrets'),
        })),
      )
      expect(await run(db(), session, "SELECT 'orders'::regclass::text AS r")).toEqual([
        { r: 'orders' },
      ])
      expect(await run(db(), session, "SELECT 'int4'::regtype::text AS t")).toEqual([
        { t: 'integer' },
      ])
      expect((await runError(db(), session, "SELECT 'secrets'::regtype")).code).toBe('42704')
      expect((await runError(db(), session, "SELECT 'nope'::regnamespace")).code).toBe('3F000')
      // OIDs and expressions are guarded (catalog-guards.ts): only the virtual catalog's OIDs
      // pass, so probing numbers never names a hidden object.
      const secrets = (
        await db().query<{ oid: string }>("SELECT 'public.secrets'::regclass::oid AS oid")
      ).rows[0]?.oid
      expect(
        await run(
          db(),
          session,
          `SELECT ${secrets}::regclass AS a, (SELECT ${secrets})::oid::regclass AS b`,
        ),
      ).toEqual([{ a: null, b: null }])
      // Routine names resolve among built-ins only (the upstream search path is empty).
      expect((await runError(db(), session, "SELECT 'f'::regproc")).code).toBe('42883')
      for (const sql of ["SELECT 'postgres'::regrole", 'SELECT 1::regrole']) {
        expect((await runError(db(), session, sql)).code, sql).toBe('0A000')
      }
    })

    it('refuses custom operators defined in the upstream', async () => {
      const session = await makeSession(db().catalog)
      expect((await runError(db(), session, 'SELECT 1 OPERATOR(public.===) 1')).code).toBe('42883')
    })

    it('keeps ordinary built-in functions working', async () => {
      const session = await makeSession(db().catalog)
      const rows = await run(
        db(),
        session,
        "SELECT upper(name) AS u, coalesce(ssn, '-') AS s, length(email)::int AS l FROM customers WHERE id = 4",
      )
      expect(rows).toEqual([{ u: 'DAN', s: '-', l: 15 }])
    })
  },
)
