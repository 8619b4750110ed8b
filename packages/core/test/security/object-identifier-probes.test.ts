import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../../src/catalog.types.js'
import { isPalisadeError } from '../../src/errors.js'
import { rewrite } from '../../src/rewrite.js'
import type { CompiledSession } from '../../src/session/compiled-session.js'
import { createShopDb, readCatalog } from '../fixtures/pglite.js'
import { makeSession, policy } from '../fixtures/session.js'

/**
 * Every way SQL text turns a name into an OID answers a hidden object exactly like a missing
 * one, for every object-identifier type: same SQLSTATE, same message (the name aside), same rows.
 */
let db: PGlite
let catalog: Catalog

beforeAll(async () => {
  db = await createShopDb()
  catalog = await readCatalog(db)
})
afterAll(() => db.close())

/** What a statement does for a user: the rewrite's or the upstream's error, or its rows. */
async function outcome(session: CompiledSession, sql: string): Promise<string> {
  let text: string
  try {
    text = rewrite(sql, session).statements[0]?.sql ?? ''
  } catch (error) {
    if (!isPalisadeError(error)) throw error
    return `${error.code} ${error.message}`
  }
  try {
    return JSON.stringify((await db.query(text)).rows)
  } catch (error) {
    return `${(error as { code?: string }).code} ${(error as Error).message}`
  }
}

const TYPES = [
  'regclass',
  'regtype',
  'regnamespace',
  'regproc',
  'regprocedure',
  'regoper',
  'regoperator',
  'regcollation',
  'regconfig',
  'regdictionary',
  'regrole',
]

/** The forms a name literal can take on its way to an object-identifier type. */
const FORMS = [
  (name: string, type: string) => `SELECT '${name}'::${type} AS x`,
  (name: string, type: string) => `SELECT CAST('${name}' AS ${type}) AS x`,
  (name: string, type: string) => `SELECT ${type} '${name}' AS x`,
  (name: string, type: string) => `SELECT '${name}'::pg_catalog.${type} AS x`,
  (name: string, type: string) => `SELECT '{${name}}'::${type}[] AS x`,
  (name: string, type: string) => `SELECT length('${name}'::${type}::text) AS x`,
  (name: string, type: string) => `SELECT 1 AS x WHERE '${name}'::${type} IS NOT NULL`,
  (name: string, type: string) => `SELECT to_${type}('${name}') AS x`,
]

/** Hidden names (by table_deny, or every table of a schema hidden) and their missing twins. */
const PAIRS: [hidden: string, missing: string][] = [
  ['secrets', 'secretz'],
  ['public.secrets', 'public.secretz'],
  ['hr.employees', 'hr.employeez'],
  ['hr', 'hz'],
  ['public.clearance', 'public.clearancz'],
  ['hr.employees_pkey', 'hr.employeez_pkey'],
]

function sameAnswer(hidden: string, missing: string, a: string, b: string): void {
  const quoted = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const normalized = a.replace(new RegExp(`\\b${quoted(hidden)}\\b`, 'g'), missing)
  expect(normalized).toBe(b)
}

describe('object-identifier probes', () => {
  it('answers hidden and missing names identically for every reg* type and form', async () => {
    const hideSecrets = policy('table_deny', {
      target: { schemas: ['public'], tables: ['secrets'] },
    })
    const hideHr = policy('table_deny', { target: { schemas: ['hr'], tables: ['*'] } })
    const session = await makeSession(catalog, { policies: [hideSecrets, hideHr] })
    let compared = 0
    for (const type of TYPES) {
      for (const form of FORMS) {
        for (const [hidden, missing] of PAIRS) {
          const a = await outcome(session, form(hidden, type))
          const b = await outcome(session, form(missing, type))
          sameAnswer(hidden, missing, a, b)
          compared++
        }
      }
    }
    expect(compared).toBe(TYPES.length * FORMS.length * PAIRS.length)
  })

  it('treats a schema whose every table is hidden like a missing schema', async () => {
    const hideHr = policy('table_deny', { target: { schemas: ['hr'], tables: ['*'] } })
    const session = await makeSession(catalog, { policies: [hideHr] })
    expect(await outcome(session, "SELECT 'hr'::regnamespace")).toBe(
      '3F000 schema "hr" does not exist',
    )
    expect(await outcome(session, "SELECT 'sales'::regnamespace::text AS x")).toBe(
      '[{"x":"sales"}]',
    )
    const schemata = await outcome(
      session,
      'SELECT schema_name FROM information_schema.schemata ORDER BY 1',
    )
    expect(schemata).not.toContain('"hr"')
    const required = await makeSession(catalog, {
      accessMode: 'policy_required',
      policies: [
        policy('column_allow', {
          target: { schemas: ['public'], tables: ['orders'], columns: ['*'] },
        }),
      ],
    })
    for (const schema of ['sales', 'hr']) {
      expect(await outcome(required, `SELECT '${schema}'::regnamespace`)).toBe(
        `3F000 schema "${schema}" does not exist`,
      )
    }
  })

  it("words a missing name's error as PostgreSQL does", async () => {
    const { rows } = await db.query<{ v: string; d: string }>(
      "SELECT current_setting('server_version_num') AS v, current_database() AS d",
    )
    const session = await makeSession(catalog, {
      serverVersion: Number(rows[0]?.v),
      datasource: rows[0]?.d as string,
    })
    const direct = async (sql: string) => {
      try {
        return JSON.stringify((await db.query(sql)).rows)
      } catch (error) {
        return `${(error as { code?: string }).code} ${(error as Error).message}`
      }
    }
    for (const sql of [
      "SELECT 'PUBLIC.SECRETZ'::regclass",
      "SELECT 'Secretz'::regclass",
      'SELECT \'"Nowhere".t\'::regclass',
      "SELECT 'a..b'::regclass",
      "SELECT 'other.public.t'::regclass",
      "SELECT 'postgres.public.nothing'::regclass",
      "SELECT 'NOWHERE'::regnamespace",
      "SELECT 'a.b'::regnamespace",
    ]) {
      expect(await outcome(session, sql), sql).toBe(await direct(sql))
    }
  })

  it('guards values that take an object-identifier type from their siblings', async () => {
    const hideHr = policy('table_deny', { target: { schemas: ['hr'], tables: ['*'] } })
    const session = await makeSession(catalog, { policies: [hideHr] })
    const { rows } = await db.query<{ oid: number }>(
      "SELECT 'hr.employees'::regclass::oid::int AS oid",
    )
    const hidden = rows[0]?.oid as number
    for (const form of [
      (v: string) => `SELECT coalesce(NULL::regclass, ${v})::text AS x`,
      (v: string) => `SELECT (ARRAY[NULL::regclass, ${v}])[2]::text AS x`,
      (v: string) =>
        `SELECT x::text FROM (SELECT NULL::regclass AS x UNION ALL SELECT ${v}) u WHERE x IS NOT NULL`,
      (v: string) => `SELECT greatest(NULL::regclass, ${v} + 0)::text AS x`,
    ]) {
      const a = await outcome(session, form(String(hidden)))
      const b = await outcome(session, form('4000000000'))
      expect(a, form(String(hidden))).not.toContain('employees')
      expect(a.replace(String(hidden), '4000000000')).toBe(b)
    }
    // A visible relation's name still resolves, as in an explicit cast.
    expect(await outcome(session, "SELECT coalesce(NULL::regclass, 'orders')::text AS x")).toMatch(
      /orders/,
    )
  })

  it('still resolves visible names', async () => {
    const session = await makeSession(catalog)
    expect(await outcome(session, "SELECT 'public.orders'::regclass::text AS x")).toMatch(
      /^\[\{"x":"(public\.)?orders"\}\]$/,
    )
    expect(await outcome(session, "SELECT 'int4'::regtype::text AS x")).toBe('[{"x":"integer"}]')
    // Built-in routines by name, as pgJDBC asks for array types.
    const jdbc =
      "SELECT typinput = 'pg_catalog.array_in'::regproc AS is_array FROM pg_catalog.pg_type WHERE typname = '_int4'"
    expect(await outcome(session, jdbc)).toBe('[{"is_array":true}]')
    expect(await outcome(session, "SELECT 'lower(text)'::regprocedure::text AS x")).toBe(
      '[{"x":"lower(text)"}]',
    )
    expect(
      await outcome(
        session,
        "SELECT count(*) AS n FROM pg_type WHERE typinput = 'int4in'::regproc",
      ),
    ).toBe('[{"n":1}]')
  })
})
