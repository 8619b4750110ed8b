import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { WireClient } from './fixtures/wire-client.js'

/** A frontend message: type, length, then the parts as they are (malformed on purpose). */
function frame(code: string, ...parts: (Buffer | string | number[])[]): Buffer {
  const body = Buffer.concat(
    parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))),
  )
  const header = Buffer.alloc(5)
  header.write(code, 0, 'latin1')
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

const LIMIT = 256 * 1024
let marks = 0

interface Case {
  readonly name: string
  /** Messages sent for marker `m`; the connection then answers once (or ends). */
  readonly send: (m: string) => Buffer[]
  /** The audit row's text and error message. */
  readonly text: (m: string) => string
  readonly message: string
  /** The refusal ends the connection (FATAL). */
  readonly fatal?: boolean
}

const cases: Case[] = [
  {
    name: 'a Query whose text carries a NUL byte',
    send: (m) => [frame('Q', `SELECT '${m}' AS m\0\0`)],
    text: (m) => `SELECT '${m}' AS m\\x00`,
    message: 'invalid message format',
  },
  {
    name: 'a Query that is not UTF-8',
    send: (m) => [frame('Q', `SELECT '${m} caf\xe9' AS v\0`)],
    text: (m) => `SELECT '${m} caf\\xe9' AS v`,
    message: 'invalid byte sequence for encoding "UTF8": 0xe9 0x27 0x20',
  },
  {
    name: 'a Query without its terminator',
    send: (m) => [frame('Q', `SELECT '${m}'`)],
    text: (m) => `SELECT '${m}'`,
    message: 'invalid string in message',
  },
  {
    name: 'a Parse whose SQL is not UTF-8',
    send: (m) => [
      frame('P', '\0', `SELECT '${m} \xff'\0`, [0, 0]),
      serialize.bind({}),
      serialize.execute({}),
      serialize.sync(),
    ],
    text: (m) => `SELECT '${m} \\xff'`,
    message: 'invalid byte sequence for encoding "UTF8": 0xff',
  },
  {
    name: 'a Bind whose text value is not UTF-8',
    send: (m) => [
      serialize.parse({ text: 'SELECT $1::text AS v' }),
      frame('B', `${m}\0\0`, [0, 0, 0, 1], [0, 0, 0, 3], [0x61, 0xfe, 0x62], [0, 0]),
      serialize.execute({}),
      serialize.sync(),
    ],
    // Control bytes are escaped too: the row shows every byte that was sent.
    text: (m) => `[Bind] ${m}\\x00\\x00\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x03a\\xfeb\\x00\\x00`,
    message: 'invalid byte sequence for encoding "UTF8": 0xfe',
  },
  {
    name: 'a message of an unknown type',
    send: (m) => [frame('z', m)],
    text: (m) => `[message type 0x7a] ${m}`,
    message: 'invalid frontend message type 122',
    fatal: true,
  },
  {
    name: 'a message over the size limit',
    send: () => [frame('Q', 'x'.repeat(LIMIT), '\0')],
    text: () => `[Query message of ${LIMIT + 5} bytes, not read]`,
    message: `message of ${LIMIT + 6} bytes exceeds the limit of ${LIMIT} bytes`,
    fatal: true,
  },
]

/**
 * Every message Palisade refuses after login has an `error` audit row of that user, with the
 * text as received: NUL and invalid bytes escaped, long texts cut.
 */
export function runRefusedMessageCases(name: string, makeHarness: MakeHarness): void {
  describe(`refused messages are audited, over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness({ plane: { maxMessageBytes: LIMIT } })
    })
    afterAll(() => h?.close())

    /** The audit rows of alice whose text is `text`. */
    const rowsOf = async (text: string) =>
      (await h.auditRows()).filter((r) => r.original_query === text && r.username === 'alice')

    for (const c of cases) {
      it(`audits ${c.name} as an error of its user`, async () => {
        const m = `refused_${++marks}`
        const client = await WireClient.connect(h.plane.port, 'alice')
        try {
          client.send(Buffer.concat(c.send(m)))
          await client.untilReady(1, 5000)
          expect(client.closed).toBe(c.fatal === true)
          const rows = await rowsOf(c.text(m))
          expect(rows.map((r) => [r.status, r.error_message])).toEqual([['error', c.message]])
        } finally {
          client.close()
        }
      })
    }

    it('cuts a long refused text and says how long it was', async () => {
      const m = `refused_${++marks}`
      const sql = `SELECT '${m}${'y'.repeat(10_000)}' AS m`
      const client = await WireClient.connect(h.plane.port, 'alice')
      try {
        client.send(frame('Q', `${sql}\0\0`))
        await client.untilReady(1, 5000)
        const row = (await h.auditRows()).find((r) => r.original_query.startsWith(`SELECT '${m}`))
        expect(row?.status).toBe('error')
        expect(row?.original_query).toBe(
          `${`${sql}\\x00`.slice(0, 4096)}… [cut: ${sql.length + 1} bytes in all]`,
        )
      } finally {
        client.close()
      }
    })
  })
}
