import type pg from 'pg'
import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { errorCode } from './fixtures/raw-socket.js'
import { upstreamOf } from './fixtures/upstream-handle.js'
import { framesOf, WireClient } from './fixtures/wire-client.js'

/**
 * Upstream objects in the default schema that would stand in for built-ins if rewritten SQL
 * resolved names through a search path: each one reads the secret table every user is denied.
 */
const SHADOWS_SQL = `
CREATE FUNCTION public.lower(integer) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE FUNCTION public.upper(numeric) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE FUNCTION public.length(integer) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE FUNCTION public.abs(text) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE FUNCTION public.concat(integer, integer) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE FUNCTION public.leak_plus(text, integer) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE OPERATOR public.+ (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.leak_plus);
CREATE FUNCTION public.leak_eq(text, integer) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = integer, FUNCTION = public.leak_eq);
CREATE FUNCTION public.leak_check(text) RETURNS boolean LANGUAGE sql AS $$ SELECT $1 <> (SELECT value FROM public.secrets LIMIT 1) $$;
CREATE DOMAIN public.citext AS text CHECK (public.leak_check(VALUE));
CREATE TYPE public.mood AS ENUM ('sad', 'ok');
`

/** A cast between built-in types through a function that reads the secret. */
const CAST_SQL = `
CREATE FUNCTION public.leak_int(integer) RETURNS text LANGUAGE sql AS $$ SELECT value FROM public.secrets LIMIT 1 $$;
CREATE CAST (integer AS text) WITH FUNCTION public.leak_int(integer);
`
const DROP_CAST_SQL = 'DROP CAST (integer AS text); DROP FUNCTION public.leak_int(integer);'

const SECRET = /the recipe/

async function outcome(client: pg.Client, sql: string): Promise<string> {
  try {
    return JSON.stringify((await client.query(sql)).rows)
  } catch (error) {
    return `error ${(error as { code?: string }).code}: ${(error as Error).message}`
  }
}

/** Shadowing functions, operators, types and casts in the upstream's default schema. */
export function runShadowingCases(name: string, makeHarness: MakeHarness): void {
  describe(`upstream objects that shadow built-ins, over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
      const upstream = await upstreamOf(h)
      try {
        await upstream.exec(SHADOWS_SQL)
      } finally {
        await upstream.close()
      }
    })
    afterAll(() => h?.close())

    it('resolves every function call to pg_catalog, never to an exact-match overload', async () => {
      for (const user of ['alice', 'carol']) {
        const client = await h.connect(user)
        for (const [sql, code] of [
          ['SELECT lower(42) AS x', '42883'],
          ['SELECT upper(1.5) AS x', '42883'],
          ['SELECT length(7) AS x', '42883'],
          ['SELECT abs(name) AS x FROM customers', '42883'],
          ['SELECT pg_catalog.lower(42) AS x', '42883'],
        ] as const) {
          const out = await outcome(client, sql)
          expect(out, `${user}: ${sql}`).not.toMatch(SECRET)
          expect(out, `${user}: ${sql}`).toMatch(new RegExp(`^error ${code}`))
        }
        // Built-ins still work, with their own meaning.
        expect((await client.query("SELECT lower('AbC') AS x, length('abc') AS n")).rows).toEqual([
          { x: 'abc', n: 3 },
        ])
        expect((await client.query('SELECT concat(1, 2) AS x')).rows).toEqual([{ x: '12' }])
      }
    })

    it('resolves operators to pg_catalog', async () => {
      const carol = await h.connect('carol')
      const plus = await outcome(carol, 'SELECT name + 1 AS x FROM customers')
      expect(plus).not.toMatch(SECRET)
      expect(plus).toMatch(/^error 42883/)
      const eq = await outcome(carol, 'SELECT count(*) AS n FROM customers WHERE name = 1')
      expect(eq).toMatch(/^error 42883: operator does not exist: text = integer/)
      const extended = await carol.query({ text: 'SELECT $1::text + 1 AS x', values: ['a'] }).then(
        (r) => JSON.stringify(r.rows),
        (e: { code?: string }) => `error ${e.code}`,
      )
      expect(extended).not.toMatch(SECRET)
    })

    it('never names an upstream type', async () => {
      const carol = await h.connect('carol')
      for (const sql of ["SELECT 'x'::citext", "SELECT 'ok'::mood", "SELECT 'ok'::public.mood"]) {
        const out = await outcome(carol, sql)
        expect(out, sql).toMatch(/^error 42704: type ".*" does not exist/)
      }
      expect((await carol.query("SELECT 'x'::text AS t")).rows).toEqual([{ t: 'x' }])
    })

    it('refuses a Parse declaring a reg* parameter, whatever the name it will carry', async () => {
      // regclass, regnamespace, regtype, regproc and an array type: text and binary values.
      for (const type of [2205, 4089, 2206, 24, 2210]) {
        const answers: string[] = []
        for (const value of ['public.secrets', 'public.secretz', 'secrets']) {
          const client = await WireClient.connect(h.plane.port, 'alice')
          try {
            client.send(
              Buffer.concat([
                serialize.parse({ text: 'SELECT $1 AS x', types: [type] }),
                serialize.bind({ values: [value] }),
                serialize.execute(),
                serialize.sync(),
              ]),
            )
            const frames = await client.untilReady(1, 5000)
            const errors = framesOf(frames, 'E')
            const rows = framesOf(frames, 'D')
            expect(rows).toHaveLength(0)
            answers.push(errorCode(Buffer.concat(errors.map((f) => f.bytes))) ?? 'none')
          } finally {
            client.close()
          }
        }
        expect(answers).toEqual(['0A000', '0A000', '0A000'])
      }
    })

    it('refuses an upstream whose casts between built-in types run non-system functions', async () => {
      const upstream = await upstreamOf(h)
      try {
        await upstream.exec(CAST_SQL)
        // A session opened now, or one handed back and reset, never runs the cast function.
        const refused = await h
          .connect('carol')
          .then((client) => outcome(client, 'SELECT 42::text AS x'))
          .catch((error: Error) => `refused: ${error.message}`)
        expect(refused).not.toMatch(SECRET)
        expect(refused).toMatch(/upstream refused: it defines casts between built-in types/)
      } finally {
        await upstream.exec(DROP_CAST_SQL)
        await upstream.close()
      }
      const after = await h.connect('carol')
      expect((await after.query('SELECT 42::text AS x')).rows).toEqual([{ x: '42' }])
    })
  })
}
