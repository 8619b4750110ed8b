/**
 * Literal parameters over PostgreSQL (docs/rewrite.md#literal-parameters): simple-protocol
 * statements that differ only in their numbers run upstream as one prepared statement with the
 * numbers as parameters, in both pool modes, answering exactly as the literal statements do,
 * with the row filter and mask of the client's session, and audited with the client's literals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Harness,
  type MakeHarness,
  postgresHarness,
  transactionPoolHarness,
} from './fixtures/harness.js'

const url = process.env['PALISADE_TEST_PG_URL']

const modes: [string, MakeHarness][] = [
  ['session', postgresHarness],
  ['transaction', transactionPoolHarness],
]

for (const [mode, makeHarness] of modes) {
  describe.skipIf(!url)(`literal parameters, ${mode} pooling`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
    })
    afterAll(async () => {
      await h?.close()
    })

    /** What the upstream's sessions on the scratch database last ran. */
    async function upstreamTexts(): Promise<string[]> {
      const admin = h.upstreamAdmin
      if (!admin) throw new Error('PostgreSQL tier only')
      const { rows } = await admin.client.query<{ query: string }>(
        "SELECT query FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        [admin.database],
      )
      return rows.map((r) => r.query)
    }

    it('runs a shape once prepared, numbers bound, rows filtered and masked as literals are', async () => {
      const alice = await h.connect('alice')
      const carol = await h.connect('carol')
      const shape = (id: number, min: string) =>
        `SELECT o.id, o.amount, c.email FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id >= ${id} AND o.amount > ${min} ORDER BY o.id`
      for (const [id, min] of [
        [10, '0'],
        [11, '5.5'],
        [12, '0'],
        [10, '15'],
        [13, '1e1'],
        [10, '.5'],
      ] as const) {
        const sql = shape(id, min)
        const ofAlice = await alice.query(sql)
        const ofCarol = await carol.query(sql)
        // alice sees her tenant's orders with masked emails, carol every order in clear.
        const everyOrder = [
          { id: 10, amount: '10.00', email: 'ann@acme.test' },
          { id: 11, amount: '20.00', email: 'bob@acme.test' },
          { id: 12, amount: '30.00', email: 'cid@globex.test' },
          { id: 13, amount: '40.00', email: 'cid@globex.test' },
        ].filter((o) => o.id >= id && Number(o.amount) > Number(min))
        expect(ofCarol.rows).toEqual(everyOrder)
        expect(ofAlice.rows.map((r) => r.id)).toEqual(
          everyOrder.filter((o) => o.id <= 11).map((o) => o.id),
        )
        for (const row of ofAlice.rows) expect(row.email).not.toContain('@')
        expect(ofAlice.fields.map((f) => f.dataTypeID)).toEqual(
          ofCarol.fields.map((f) => f.dataTypeID),
        )
      }
      // The upstream ran the shape with parameters, not a text per literal.
      const texts = await upstreamTexts()
      expect(texts.some((t) => /o\.id >= \$1 AND o\.amount > \$2/.test(t))).toBe(true)
      expect(texts.some((t) => /o\.id >= 1[0-3] /.test(t))).toBe(false)
      // The audit keeps what the client sent.
      const audited = (await h.auditRows()).find((r) => r.original_query === shape(13, '1e1'))
      expect(audited?.rewritten_query).toMatch(/o\.id >= 13 AND o\.amount > 1e1/)
    })

    it('types each number as PostgreSQL types the literal', async () => {
      const client = await h.connect('carol')
      for (let run = 0; run < 4; run++) {
        const { rows, fields } = await client.query(
          `SELECT ${run} AS small, 1.50 AS dec, -${run + 5} AS neg, 3000000000 AS big, pg_typeof(${run}) AS t FROM orders WHERE id = 10`,
        )
        expect(rows).toEqual([
          { small: run, dec: '1.50', neg: -(run + 5), big: '3000000000', t: 'integer' },
        ])
        expect(fields.map((f) => f.dataTypeID)).toEqual([23, 1700, 23, 20, 2206])
      }
    })

    it("answers PostgreSQL's error when a bound number fails, and goes on", async () => {
      const client = await h.connect('carol')
      for (let run = 0; run < 4; run++) {
        await expect(client.query(`SELECT 2147483647 + ${run + 1} AS x`)).rejects.toMatchObject({
          code: '22003',
        })
        const divided = await client
          .query(`SELECT 10 / ${run} AS x FROM orders WHERE id = 10`)
          .then(
            (r) => r.rows,
            (e: { code: string }) => e.code,
          )
        expect(divided).toEqual(run === 0 ? '22012' : [{ x: Math.trunc(10 / run) }])
      }
      expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
    })
  })
}

describe.skipIf(!url)('literal parameters turned off', () => {
  let h: Harness
  beforeAll(async () => {
    h = await postgresHarness({ plane: { literalParameters: false } })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('sends every literal in the text, and answers the same', async () => {
    const client = await h.connect('alice')
    for (const id of [10, 11, 12, 10]) {
      const { rows } = await client.query(`SELECT id FROM orders WHERE id = ${id}`)
      expect(rows).toEqual(id <= 11 ? [{ id }] : [])
    }
    const admin = h.upstreamAdmin
    if (!admin) throw new Error('PostgreSQL tier only')
    const { rows } = await admin.client.query<{ query: string }>(
      "SELECT query FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
      [admin.database],
    )
    const texts = rows.map((r) => r.query)
    expect(texts.some((t) => /WHERE id = 10\b/.test(t))).toBe(true)
    expect(texts.some((t) => t.includes('$1'))).toBe(false)
  })
})
