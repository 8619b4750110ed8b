import type { PGlite } from '@electric-sql/pglite'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPalisadeError } from '../../src/errors.js'
import { rewrite } from '../../src/rewrite.js'
import type { CompiledSession } from '../../src/session/compiled-session.js'
import { createShopDb, readCatalog } from '../fixtures/pglite.js'
import { makeSession, policy } from '../fixtures/session.js'

/**
 * Two fuzzed families of hostile queries, each over a user for whom `public.secrets` and the
 * whole `hr` schema are hidden:
 * - shadowing: expressions that call built-in functions, operators and casts with argument
 *   types that a look-alike in `public` matches better than the built-in. The upstream runs with
 *   an empty search path (as every Palisade upstream session does); the secret never appears in
 *   rows or errors.
 * - object-identifier probes: a name turned into an OID by any reg* type, in any position of a
 *   query, answers a hidden object exactly like a missing one.
 */
const RUNS = Math.max(200, Math.floor(Number(process.env['PALISADE_FUZZ_RUNS'] ?? 10_000) / 5))
const SEED = Number(process.env['PALISADE_FUZZ_SEED'] ?? 20261125)

const SECRET = 'launch codes'

/** Look-alikes in the default schema: each returns the secret, or raises it. */
const SHADOWS_SQL = `
CREATE FUNCTION public.leak() RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE FUNCTION public.raise_leak() RETURNS text LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'secret: %', (SELECT value FROM public.secrets LIMIT 1); END $$;
CREATE FUNCTION public.lower(integer) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE FUNCTION public.upper(numeric) RETURNS text LANGUAGE sql AS $$ SELECT public.raise_leak() $$;
CREATE FUNCTION public.length(integer) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE FUNCTION public.abs(text) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE FUNCTION public.round(text) RETURNS text LANGUAGE sql AS $$ SELECT public.raise_leak() $$;
CREATE FUNCTION public.concat(integer, integer) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE FUNCTION public.btrim(integer) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE FUNCTION public.md5(integer) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE FUNCTION public.left(integer, integer) RETURNS text LANGUAGE sql AS $$ SELECT public.raise_leak() $$;
CREATE FUNCTION public.leak_op(text, integer) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE OPERATOR public.+ (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.leak_op);
CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.leak_op);
CREATE FUNCTION public.leak_eq(text, integer) RETURNS boolean LANGUAGE sql AS
  $$ SELECT public.raise_leak() IS NULL $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.leak_eq);
CREATE OPERATOR public.< (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.leak_eq);
CREATE FUNCTION public.leak_not(text) RETURNS text LANGUAGE sql AS $$ SELECT public.leak() $$;
CREATE OPERATOR public.! (RIGHTARG = text, FUNCTION = public.leak_not);
`

/** Expressions of the visible `orders` table, a few types each. */
const TEXT_ARGS = ['status', 'note', "'7'", 'id::text', "coalesce(note, 'x')"]
const INT_ARGS = ['id', 'customer_id', 'tenant_id', '42', '(id + 1)']
const NUM_ARGS = ['amount', '4.2', 'amount * 2']

function pick<T>(values: readonly T[]): fc.Arbitrary<T> {
  return fc.constantFrom(...values)
}

/** An expression in which a look-alike would win overload resolution on a search path. */
const shadowedExpression: fc.Arbitrary<string> = fc.oneof(
  pick(INT_ARGS).map((a) => `lower(${a})`),
  pick(NUM_ARGS).map((a) => `upper(${a})`),
  pick(INT_ARGS).map((a) => `length(${a})`),
  pick(TEXT_ARGS).map((a) => `abs(${a})`),
  pick(TEXT_ARGS).map((a) => `round(${a})`),
  fc.tuple(pick(INT_ARGS), pick(INT_ARGS)).map(([a, b]) => `concat(${a}, ${b})`),
  pick(INT_ARGS).map((a) => `btrim(${a})`),
  pick(INT_ARGS).map((a) => `md5(${a})`),
  fc.tuple(pick(INT_ARGS), pick(INT_ARGS)).map(([a, b]) => `"left"(${a}, ${b})`),
  fc
    .tuple(pick(TEXT_ARGS), pick(['+', '||', '=', '<']), pick(INT_ARGS))
    .map(([a, op, b]) => `(${a} ${op} ${b})`),
  fc.tuple(pick(TEXT_ARGS), pick(['OPERATOR(+)', 'OPERATOR(=)'])).map(([a, op]) => `${a} ${op} 1`),
  pick(TEXT_ARGS).map((a) => `(! ${a})`),
  pick(INT_ARGS).map((a) => `${a}::text || ${a}`),
)

/** Where the expression goes: select list, filter, ordering, grouping, nested queries. */
const shadowingQuery: fc.Arbitrary<string> = fc
  .tuple(
    shadowedExpression,
    pick(['select', 'where', 'order', 'group', 'cte', 'subquery', 'lateral', 'case', 'agg']),
  )
  .map(([e, place]) => {
    switch (place) {
      case 'where':
        return `SELECT id FROM orders WHERE (${e})::text IS NOT NULL`
      case 'order':
        return `SELECT id FROM orders ORDER BY (${e})::text`
      case 'group':
        return `SELECT (${e})::text AS g, count(*) FROM orders GROUP BY 1`
      case 'cte':
        return `WITH w AS (SELECT ${e} AS x FROM orders) SELECT x::text FROM w`
      case 'subquery':
        return `SELECT (SELECT (${e})::text FROM orders LIMIT 1) AS x`
      case 'lateral':
        return `SELECT o.id, l.x FROM orders o, LATERAL (SELECT (${e})::text AS x) l`
      case 'case':
        return `SELECT CASE WHEN id > 0 THEN (${e})::text END AS x FROM orders`
      case 'agg':
        return `SELECT string_agg((${e})::text, ',') AS x FROM orders`
      default:
        return `SELECT ${e} AS x FROM orders`
    }
  })

const REG_TYPES = [
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

/** Hidden names and missing twins; the missing one differs by one letter at the end. */
const NAME_PAIRS: [hidden: string, missing: string][] = [
  ['secrets', 'secretz'],
  ['public.secrets', 'public.secretz'],
  ['PUBLIC.SECRETS', 'PUBLIC.SECRETZ'],
  ['"secrets"', '"secretz"'],
  ['public."secrets"', 'public."secretz"'],
  ['secrets_pkey', 'secretz_pkey'],
  ['clearance', 'clearancz'],
  ['hr', 'hz'],
  ['hr.employees', 'hr.employeez'],
  ['hr.employees_pkey', 'hr.employeez_pkey'],
  ['_secrets', '_secretz'],
]

/** An expression turning the name literal `%N` into an OID of type `%T`, then using it. */
const PROBES = [
  "'%N'::%T",
  "CAST('%N' AS %T)",
  "%T '%N'",
  "'%N'::pg_catalog.%T",
  "('{%N}'::%T[])[1]",
  "to_%T('%N')",
  "'%N'::%T::oid",
  "'%N'::%T::text",
  "format('%s', '%N'::%T)",
  "coalesce('%N'::%T, NULL)",
  "ARRAY['%N'::%T]",
  "(SELECT '%N'::%T)",
  "CASE WHEN true THEN '%N'::%T END",
  "pg_typeof('%N'::%T)",
  "'%N'::%T = 0",
  "nullif('%N'::%T::text, '')",
  "'%N'::text::%T",
  // Untyped strings that take a reg* type from their siblings are read as names too.
  "coalesce(NULL::%T, '%N')",
  "greatest(NULL::%T, '%N')",
  "CASE WHEN false THEN NULL::%T ELSE '%N' END",
  "ARRAY[NULL::%T, '%N']",
  "(SELECT max(x::text) FROM (VALUES (NULL::%T), ('%N')) v(x))",
  "(SELECT max(x::text) FROM (SELECT NULL::%T AS x UNION ALL SELECT '%N') u)",
  "(WITH w(r) AS (SELECT NULL::%T) SELECT coalesce(r, '%N')::text FROM w)",
  "(WITH w AS (SELECT NULL::%T AS r) SELECT coalesce(r, '%N')::text FROM w)",
  // Strings beside a regproc column of the catalog.
  "(SELECT count(*) FROM pg_type WHERE typinput = '%N')",
  "(SELECT count(*) FROM pg_type WHERE typoutput IN ('%N', 'int4out'))",
  "(SELECT count(*) FROM pg_proc WHERE prosupport = ANY('{%N}'))",
  "(SELECT max(coalesce(oprcode, '%N')::text) FROM pg_operator)",
  "(SELECT count(CASE typinput WHEN '%N' THEN 1 END) FROM pg_type)",
]

const probeQuery: fc.Arbitrary<{
  type: string
  pair: [string, string]
  sql: (n: string) => string
}> = fc
  .tuple(
    pick(REG_TYPES),
    pick(NAME_PAIRS),
    pick(PROBES),
    pick(['select', 'where', 'from', 'cte', 'order', 'values', 'join']),
  )
  .map(([type, pair, probe, place]) => {
    const expr = (n: string) => probe.replaceAll('%N', n).replaceAll('%T', type)
    const sql = (n: string) => {
      const e = expr(n)
      switch (place) {
        case 'where':
          return `SELECT 1 AS x WHERE (${e}) IS NOT NULL`
        case 'from':
          return `SELECT x FROM (SELECT ${e} AS x) d`
        case 'cte':
          return `WITH w AS (SELECT ${e} AS x) SELECT x FROM w`
        case 'order':
          return `SELECT id FROM orders ORDER BY (${e})::text, id LIMIT 1`
        case 'values':
          return `SELECT * FROM (VALUES (${e})) v(x)`
        case 'join':
          return `SELECT o.id FROM orders o JOIN (SELECT ${e} AS x) p ON true ORDER BY 1 LIMIT 1`
        default:
          return `SELECT ${e} AS x`
      }
    }
    return { type, pair, sql }
  })

let db: PGlite
let session: CompiledSession

beforeAll(async () => {
  db = await createShopDb()
  const catalog = await readCatalog(db)
  await db.exec(SHADOWS_SQL)
  // Every Palisade upstream session runs like this (docs/rewrite.md, name resolution upstream).
  await db.exec("SET search_path = ''")
  session = await makeSession(catalog, {
    policies: [
      policy('table_deny', { target: { schemas: ['public'], tables: ['secrets'] } }),
      policy('table_deny', { target: { schemas: ['hr'], tables: ['*'] } }),
    ],
  })
})
afterAll(() => db.close())

/** The rewrite's error, the upstream's error, or the rows, as one comparable string. */
async function outcome(sql: string): Promise<{ text: string; executed: boolean }> {
  let rewritten: string
  try {
    rewritten = rewrite(sql, session).statements[0]?.sql ?? ''
  } catch (error) {
    if (!isPalisadeError(error)) throw error
    return { text: `rewrite ${error.code} ${error.message}`, executed: false }
  }
  try {
    const rows = (await db.query(rewritten)).rows
    return { text: JSON.stringify(rows), executed: true }
  } catch (error) {
    const e = error as { code?: string; message: string; detail?: string; hint?: string }
    return {
      text: `upstream ${e.code} ${e.message} ${e.detail ?? ''} ${e.hint ?? ''}`,
      executed: false,
    }
  }
}

describe('shadowing look-alikes in the default schema', () => {
  it('the seeded environment would leak without the empty search path', async () => {
    // Guards the fuzzer itself: the look-alikes really are chosen on an ordinary search path.
    await db.exec('SET search_path = public')
    try {
      const { rows } = await db.query<{ x: string }>('SELECT lower(42) AS x')
      expect(rows[0]?.x).toBe(SECRET)
    } finally {
      await db.exec("SET search_path = ''")
    }
  })

  it(`never returns or raises the secret (${RUNS} seeded queries)`, async () => {
    let executed = 0
    await fc.assert(
      fc.asyncProperty(shadowingQuery, async (sql) => {
        const result = await outcome(sql)
        if (result.executed) executed++
        if (result.text.includes(SECRET)) throw new Error(`leak in ${sql}: ${result.text}`)
      }),
      { numRuns: RUNS, seed: SEED },
    )
    console.log(`shadowing: ${RUNS} queries, ${executed} executed`)
    // Most calls have no built-in match at all once the look-alikes are out of reach (an error
    // is a safe outcome); enough must run for the property to mean something.
    expect(executed).toBeGreaterThan(RUNS / 10)
  }, 300_000)
})

describe('object-identifier probes, fuzzed', () => {
  it(`answers a hidden name exactly like a missing one (${RUNS} seeded probes)`, async () => {
    let compared = 0
    await fc.assert(
      fc.asyncProperty(probeQuery, async ({ pair: [hidden, missing], sql }) => {
        const a = (await outcome(sql(hidden))).text
        const b = (await outcome(sql(missing))).text
        // The hidden name may be echoed back in an error; nothing else may differ.
        const normalized = a.split(hidden).join(missing)
        const bare = (n: string) => n.replaceAll('"', '').replace(/^.*\./, '').toLowerCase()
        const echoed = normalized.split(bare(hidden)).join(bare(missing))
        // Identical answers need no echo normalizing (which would also rewrite ordinary words).
        if (a !== b && echoed !== b)
          throw new Error(`oracle: ${sql(hidden)}\n  ${a}\nvs ${sql(missing)}\n  ${b}`)
        compared++
      }),
      { numRuns: RUNS, seed: SEED },
    )
    expect(compared).toBe(RUNS)
  }, 300_000)
})
