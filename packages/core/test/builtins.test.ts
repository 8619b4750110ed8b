import { expect, it } from 'vitest'
import { loadCore } from '../src/load-core.js'
import {
  FUNCTION_ALLOWLIST,
  OPERATOR_ALLOWLIST,
  wordSet,
} from '../src/policy/function-allowlist.js'
import { AGGREGATE_FUNCTIONS, SET_RETURNING_FUNCTIONS } from '../src/policy/function-kinds.js'
import { REFUSED_FUNCTION_NAMES } from '../src/policy/refused-builtins.generated.js'
import { validateExpression } from '../src/policy/validate-policy.js'
import { describeOnDatabases } from './fixtures/databases.js'
import { makeSession, run, runError } from './fixtures/session.js'

const refused = new Set(
  Object.values(REFUSED_FUNCTION_NAMES).flatMap((names) => [...wordSet(names)]),
)

describeOnDatabases('the built-in allowlists generated from pg_catalog', (db) => {
  it("classify every function and operator of this server's pg_catalog", async () => {
    const functions = await db().query<{ name: string }>(
      `SELECT DISTINCT proname AS name FROM pg_catalog.pg_proc
        WHERE pronamespace = 'pg_catalog'::regnamespace`,
    )
    const unclassified = functions.rows
      .map((r) => r.name)
      .filter((n) => !FUNCTION_ALLOWLIST.has(n) && !refused.has(n))
    expect(unclassified).toEqual([])
    const operators = await db().query<{ name: string }>(
      `SELECT DISTINCT oprname AS name FROM pg_catalog.pg_operator
        WHERE oprnamespace = 'pg_catalog'::regnamespace`,
    )
    expect(operators.rows.map((r) => r.name).filter((n) => !OPERATOR_ALLOWLIST.has(n))).toEqual([])
  })

  it('run the pure built-ins the old hand-written lists refused', async () => {
    const session = await makeSession(db().catalog)
    expect(
      await run(
        db(),
        session,
        `SELECT to_tsvector('simple', 'a b')::text AS v, date('2026-11-05 10:00'::timestamp)::text AS d,
           '{"a": 1, "b": 2}'::jsonb #- '{a}' AS j, 'ABC' !~* 'b' AS r,
           jsonb_contains('{"a": 1}', '{}') AS e, '5'::information_schema.cardinal_number::int AS c`,
      ),
    ).toEqual([{ v: "'a':1 'b':2", d: '2026-11-05', j: { b: 2 }, r: false, e: true, c: 5 }])
  })

  it('refuses a reviewed built-in with 42501 and says why, and never runs it', async () => {
    const session = await makeSession(db().catalog)
    for (const [sql, reason] of [
      ["SELECT pg_read_file('/etc/hostname')", /reads files/],
      ["SELECT set_config('search_path', 'public', false)", /writes, or changes/],
      ['SELECT pg_advisory_lock(1)', /takes locks/],
      ["SELECT has_table_privilege('customers', 'select')", /probes object existence/],
      ["SELECT query_to_xml('select 1', true, true, '')", /executes SQL text/],
    ] as const) {
      let error: { code?: string; message: string; detail?: string } | undefined
      try {
        await run(db(), session, sql)
      } catch (e) {
        error = e as typeof error
      }
      expect(error?.code).toBe('42501')
      expect(error?.message).toMatch(/^function \w+ is not allowed through Palisade$/)
      expect(error?.detail).toMatch(reason)
    }
    // Not a built-in: answered as missing, like a hidden upstream function.
    expect((await runError(db(), session, 'SELECT public.pg_read_file(1)')).code).toBe('42883')
  })
})

it('derives the aggregate and set-returning lists policy expressions are checked against', async () => {
  await loadCore()
  for (const name of ['regr_slope', 'json_objectagg', 'range_intersect_agg', 'row_number']) {
    if (FUNCTION_ALLOWLIST.has(name)) expect(AGGREGATE_FUNCTIONS.has(name)).toBe(true)
  }
  expect(SET_RETURNING_FUNCTIONS.has('jsonb_path_query')).toBe(true)
  expect(SET_RETURNING_FUNCTIONS.has('pg_options_to_table')).toBe(true)
  expect(validateExpression("jsonb_path_query(meta, '$') IS NULL")).toEqual({
    valid: false,
    error: expect.stringMatching(/set-returning/),
  })
  expect(validateExpression("to_tsvector('simple', name) @@ 'a'::tsquery")).toMatchObject({
    valid: true,
  })
})
