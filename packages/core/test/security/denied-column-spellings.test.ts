import fc from 'fast-check'
import { beforeAll, expect, it } from 'vitest'
import { rewrite } from '../../src/rewrite.js'
import { scrubUpstreamError, type UpstreamErrorFields } from '../../src/upstream-error.js'
import { describeOnDatabases } from '../fixtures/databases.js'
import { makeSession, policy } from '../fixtures/session.js'

const denySsn = policy('column_deny', {
  target: { schemas: ['public'], tables: ['customers'], columns: ['ssn'] },
})
// `price` is hidden by an allow list that leaves it out.
const allowProducts = policy('column_allow', {
  target: { schemas: ['public'], tables: ['products'], columns: ['id', 'name'] },
})
const filter = policy('row_filter', {
  target: { schemas: ['public'], tables: ['customers'] },
  filterExpression: 'tenant_id = {user.tenant}',
})

/**
 * Each statement names a denied or hidden column in one spelling. `{t}` is the table's
 * qualifier: the real table through the rewrite, and a twin without the column directly.
 */
const SPELLINGS = [
  'SELECT id, ssn FROM {t}customers',
  'SELECT id, SSN FROM {t}customers',
  'SELECT id, "ssn" FROM {t}customers',
  'SELECT id, U&"\\0073sn" FROM {t}customers',
  'SELECT id, U&"\\0073\\0073n" FROM {t}customers c',
  'SELECT id, U&"!0073sn" UESCAPE \'!\' FROM {t}customers',
  'SELECT id, U&"\\+000073sn" FROM {t}customers',
  'SELECT id, U&"\\0053SN" FROM {t}customers',
  'SELECT customers.id, customers.U&"\\0073sn" FROM {t}customers',
  'SELECT c.id, c.U&"\\0073sn" FROM {t}customers c',
  'SELECT c.id, C.SSN FROM {t}customers AS c',
  'SELECT id, {t}customers.U&"\\0073sn" FROM {t}customers',
  'SELECT id FROM {t}customers WHERE U&"\\0073sn" IS NULL',
  'SELECT id FROM {t}customers ORDER BY lower(U&"\\0073sn")',
  'SELECT id, (SELECT max(U&"\\0073sn") FROM {t}customers) FROM {t}customers',
  'SELECT id, U&"pr\\0069ce" FROM {t}products',
  'SELECT p.id, p.PRICE FROM {t}products p',
]

const RUNS = Math.max(100, Math.floor(Number(process.env['PALISADE_FUZZ_RUNS'] ?? 10_000) / 20))
const SEED = Number(process.env['PALISADE_FUZZ_SEED'] ?? 20261127)

/** One character of an identifier as `U&"…"` may write it with escape character `e`. */
const escapedChar = (c: string, e: string) =>
  fc.constantFrom(
    c,
    `${e}${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    `${e}+${c.charCodeAt(0).toString(16).padStart(6, '0')}`,
  )

/** A spelling of `name`: plain in any case, quoted, or Unicode-escaped with any escape. */
const spelling = (name: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc
      .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
      .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')),
    fc.constant(`"${name}"`),
    fc.constantFrom('\\', '!', '*', '#').chain((e) =>
      fc.tuple(...[...name].map((c) => escapedChar(c, e))).map((chars) => {
        const body = chars.join('')
        return e === '\\' ? `U&"${body}"` : `U&"${body}" UESCAPE '${e}'`
      }),
    ),
  )

/** A statement naming the column in some position, qualified or not. */
const probe = (table: string, column: string) =>
  fc
    .tuple(
      spelling(column),
      fc.constantFrom('', 't.', `${table}.`, `{t}${table}.`),
      fc.constantFrom(
        'SELECT id, {c} FROM {t}{table}{alias}',
        'SELECT id FROM {t}{table}{alias} WHERE {c} IS NULL',
        'SELECT id FROM {t}{table}{alias} ORDER BY lower({c}::text)',
        'SELECT id, count(*) FROM {t}{table}{alias} GROUP BY id, {c}',
        'SELECT id, (SELECT max({c}) FROM {t}{table}{alias}) FROM {t}{table}',
      ),
    )
    .map(([name, qualifier, shape]) => {
      const alias = qualifier === 't.' ? ' t' : ''
      return shape
        .replaceAll('{c}', `${qualifier}${name}`)
        .replaceAll('{alias}', alias)
        .replaceAll('{table}', table)
    })

interface Answer {
  code: string | undefined
  message: string
  detail?: string | undefined
  hint?: string | undefined
}

describeOnDatabases('a denied column fails like a missing one, however it is named', (db) => {
  beforeAll(async () => {
    // The same tables without the columns this session may not see, read directly.
    await db().query('CREATE SCHEMA IF NOT EXISTS twin')
    await db().query(`CREATE TABLE IF NOT EXISTS twin.customers (
      id integer, tenant_id integer, name text, email text, region text)`)
    await db().query('CREATE TABLE IF NOT EXISTS twin.products (id integer, name text)')
  })

  const failure = async (run: () => Promise<unknown>): Promise<UpstreamErrorFields> => {
    try {
      await run()
    } catch (error) {
      return error as UpstreamErrorFields
    }
    throw new Error('expected an error')
  }
  const pick = (e: Answer): Answer => ({
    code: e.code,
    message: e.message,
    ...(e.detail ? { detail: e.detail } : {}),
    ...(e.hint ? { hint: e.hint } : {}),
  })

  it('answers byte for byte as PostgreSQL answers the missing column, never naming a policy', async () => {
    const session = await makeSession(db().catalog, {
      policies: [denySsn, allowProducts, filter],
      user: { attributes: { tenant: 1 } },
    })
    for (const spelling of SPELLINGS) {
      for (const qualifier of ['', 'public.']) {
        const sql = spelling.replaceAll('{t}', qualifier)
        const direct = spelling.replaceAll('{t}', 'twin.')
        const [statement] = rewrite(sql, session).statements
        const raw = await failure(() => db().query(statement?.sql ?? ''))
        const scrubbed = scrubUpstreamError(raw, { session, originalSql: sql })
        const missing = await failure(() => db().query(direct))
        expect(missing.code, direct).toBe('42703')
        expect(pick(scrubbed), sql).toEqual(pick(missing as Answer))
        const text = JSON.stringify(scrubbed)
        for (const p of [denySsn, allowProducts, filter]) expect(text, sql).not.toContain(p.name)
      }
    }
  })

  it(`answers every fuzzed spelling of a denied column as the missing one (${RUNS} probes)`, async () => {
    const session = await makeSession(db().catalog, {
      policies: [denySsn, allowProducts, filter],
      user: { attributes: { tenant: 1 } },
    })
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(probe('customers', 'ssn'), probe('products', 'price')),
        fc.constantFrom('', 'public.'),
        async (shape, qualifier) => {
          const sql = shape.replaceAll('{t}', qualifier)
          const direct = shape.replaceAll('{t}', 'twin.')
          const [statement] = rewrite(sql, session).statements
          const raw = await failure(() => db().query(statement?.sql ?? ''))
          const missing = await failure(() => db().query(direct))
          expect(missing.code, direct).toBe('42703')
          const scrubbed = scrubUpstreamError(raw, { session, originalSql: sql })
          expect(pick(scrubbed), sql).toEqual(pick(missing as Answer))
        },
      ),
      { numRuns: RUNS, seed: SEED },
    )
  })
})
