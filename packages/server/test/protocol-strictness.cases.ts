import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BackendFrame } from '../src/upstream/upstream.types.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { rawExchange, startupMessage } from './fixtures/raw-socket.js'
import { framesOf, WireClient } from './fixtures/wire-client.js'

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

const int16 = (n: number) => [(n >> 8) & 0xff, n & 0xff]
const int32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeInt32BE(n)
  return b
}
const SYNC = serialize.sync()
const PARSE_ONE = serialize.parse({ text: 'SELECT $1::text AS v' })
const EXECUTE = serialize.execute({})

/** The SQLSTATE and message of each ErrorResponse among the frames. */
function errors(frames: readonly BackendFrame[]): { code: string; message: string }[] {
  return framesOf(frames, 'E').map((f) => {
    const fields = new Map<string, string>()
    for (const field of Buffer.from(f.bytes).subarray(5).toString('utf8').split('\0')) {
      if (field) fields.set(field[0] as string, field.slice(1))
    }
    return { code: fields.get('C') ?? '', message: fields.get('M') ?? '' }
  })
}

interface Case {
  readonly name: string
  /** Messages sent, ending with Sync or a Query (one ReadyForQuery expected). */
  readonly send: readonly Buffer[]
  readonly error: { code: string; message: string }
}

const cases: Case[] = [
  {
    name: 'a Query that is not UTF-8',
    send: [frame('Q', "SELECT 'caf\xe9' AS v\0")],
    error: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0xe9 0x27 0x20' },
  },
  {
    // Past the length the reader checks for ASCII itself: the native UTF-8 check decides.
    name: 'a long Query that is not UTF-8',
    send: [frame('Q', `SELECT '${'x'.repeat(400)}caf\xe9' AS v\0`)],
    error: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0xe9 0x27 0x20' },
  },
  {
    name: 'a Query with an overlong encoding',
    send: [frame('Q', 'SELECT ', [0xc0, 0xaf], '\0')],
    error: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0xc0 0xaf' },
  },
  {
    name: 'a Query without its terminator',
    send: [frame('Q', 'SELECT 1')],
    error: { code: '08P01', message: 'invalid string in message' },
  },
  {
    name: 'a Query with bytes after its terminator',
    send: [frame('Q', 'SELECT 1\0junk')],
    error: { code: '08P01', message: 'invalid message format' },
  },
  {
    name: 'a Parse whose SQL is not UTF-8',
    send: [frame('P', '\0', "SELECT '\xff'\0", int16(0)), serialize.bind({}), EXECUTE, SYNC],
    error: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0xff' },
  },
  {
    name: 'a Parse declaring more parameter types than it carries',
    send: [frame('P', '\0', 'SELECT $1\0', int16(3), int32(25)), serialize.bind({}), EXECUTE, SYNC],
    error: { code: '08P01', message: 'insufficient data left in message' },
  },
  {
    name: 'a Parse with bytes after its types',
    send: [frame('P', '\0', 'SELECT 1\0', int16(0), 'x'), EXECUTE, SYNC],
    error: { code: '08P01', message: 'invalid message format' },
  },
  {
    name: 'a Bind with two formats for one parameter',
    send: [
      PARSE_ONE,
      frame('B', '\0\0', int16(2), int16(0), int16(0), int16(1), int32(1), 'a', int16(0)),
      EXECUTE,
      SYNC,
    ],
    error: { code: '08P01', message: 'bind message has 2 parameter formats but 1 parameters' },
  },
  {
    name: 'a Bind whose value runs past the message',
    send: [PARSE_ONE, frame('B', '\0\0', int16(0), int16(1), int32(100), 'abc'), EXECUTE, SYNC],
    error: { code: '08P01', message: 'insufficient data left in message' },
  },
  {
    name: 'a Bind with a negative value length',
    send: [PARSE_ONE, frame('B', '\0\0', int16(0), int16(1), int32(-5), int16(0)), EXECUTE, SYNC],
    error: { code: '08P01', message: 'insufficient data left in message' },
  },
  {
    name: 'a Bind whose text value is not UTF-8',
    send: [
      PARSE_ONE,
      frame('B', '\0\0', int16(0), int16(1), int32(3), [0x61, 0xfe, 0x62], int16(0)),
      EXECUTE,
      SYNC,
    ],
    error: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0xfe' },
  },
  {
    name: 'a Bind whose second text value is not UTF-8, with a format per parameter',
    send: [
      serialize.parse({ text: 'SELECT $1::text AS a, $2::text AS b' }),
      frame(
        'B',
        '\0\0',
        int16(2),
        int16(1),
        int16(0),
        int16(2),
        int32(2),
        [0xff, 0xfe],
        int32(2),
        [0x61, 0xfe],
        int16(0),
      ),
      EXECUTE,
      SYNC,
    ],
    error: { code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0xfe' },
  },
  {
    name: 'a Bind with bytes after its result formats',
    send: [
      PARSE_ONE,
      frame('B', '\0\0', int16(0), int16(1), int32(1), 'a', int16(0), 'zz'),
      EXECUTE,
      SYNC,
    ],
    error: { code: '08P01', message: 'invalid message format' },
  },
  {
    name: 'a Bind with fewer values than the statement takes',
    send: [
      serialize.parse({ text: 'SELECT $1::int + $2::int AS v' }),
      serialize.bind({ values: ['1'] }),
      EXECUTE,
      SYNC,
    ],
    error: {
      code: '08P01',
      message: 'bind message supplies 1 parameters, but prepared statement "" requires 2',
    },
  },
  {
    name: 'a Describe of an unknown kind',
    send: [PARSE_ONE, frame('D', 'X', '\0'), SYNC],
    error: { code: '08P01', message: 'invalid DESCRIBE message subtype 88' },
  },
  {
    name: 'a Close of an unknown kind',
    send: [frame('C', 'X', '\0'), SYNC],
    error: { code: '08P01', message: 'invalid CLOSE message subtype 88' },
  },
  {
    name: 'an Execute without its row limit',
    send: [PARSE_ONE, serialize.bind({ values: ['a'] }), frame('E', '\0', int16(0)), SYNC],
    error: { code: '08P01', message: 'insufficient data left in message' },
  },
]

/**
 * Malformed messages get PostgreSQL's answers (08P01 or 22021 as an ERROR, the session going
 * on), nothing of the failed batch runs, and random frames in every phase never take the proxy
 * down.
 */
export function runProtocolStrictnessCases(name: string, makeHarness: MakeHarness): void {
  describe(`protocol strictness, over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness()
    })
    afterAll(() => h?.close())

    for (const c of cases) {
      it(`answers ${c.name} with ${c.error.code} and runs nothing of its batch`, async () => {
        const client = await WireClient.connect(h.plane.port)
        try {
          client.send(Buffer.concat(c.send))
          const frames = await client.untilReady(1)
          expect(errors(frames)).toEqual([c.error])
          expect(framesOf(frames, 'D')).toEqual([])
          expect(client.closed).toBe(false)
          // The session goes on.
          client.send(serialize.query('SELECT 7 AS seven'))
          const next = await client.untilReady(1)
          expect(errors(next)).toEqual([])
          expect(framesOf(next, 'D')).toHaveLength(1)
        } finally {
          client.close()
        }
      })
    }

    it('reads statement names, portal names and values beyond ASCII as UTF-8', async () => {
      const client = await WireClient.connect(h.plane.port)
      try {
        client.send(
          Buffer.concat([
            serialize.parse({ name: 'café', text: 'SELECT $1::text AS v' }),
            serialize.bind({ portal: 'prêt', statement: 'café', values: ['naïve 日本'] }),
            serialize.execute({ portal: 'prêt' }),
            SYNC,
          ]),
        )
        const frames = await client.untilReady(1)
        expect(errors(frames)).toEqual([])
        const row = framesOf(frames, 'D')[0]
        expect(
          Buffer.from(row?.bytes ?? [])
            .subarray(11)
            .toString('utf8'),
        ).toBe('naïve 日本')
      } finally {
        client.close()
      }
    })

    it('fails an open transaction block on a malformed Query, as PostgreSQL does', async () => {
      const client = await WireClient.connect(h.plane.port)
      try {
        client.send(serialize.query('BEGIN'))
        await client.untilReady(1)
        client.send(frame('Q', 'SELECT \xff\0'))
        const frames = await client.untilReady(1)
        expect(errors(frames).map((e) => e.code)).toEqual(['22021'])
        const ready = framesOf(frames, 'Z')[0]
        expect(String.fromCharCode(ready?.bytes[5] ?? 0)).toBe('E')
        client.send(serialize.query('ROLLBACK'))
        await client.untilReady(1)
      } finally {
        client.close()
      }
    })

    it('never crashes on random frames in any phase and keeps serving another client', async () => {
      const random = seeded(0x5eed)
      const types = 'PBDECSHQFXpcfdx\0\xff'
      for (let round = 0; round < 30; round++) {
        const client = await WireClient.connect(h.plane.port)
        const garbage: Buffer[] = []
        for (let i = 0; i < 1 + random(6); i++) {
          const code = types[random(types.length)] as string
          const body = Buffer.from(Array.from({ length: random(40) }, () => random(256)))
          // Some bodies declare a length that does not match what follows.
          const skew = random(4) === 0 ? random(9) - 4 : 0
          const f = frame(code, body)
          f.writeInt32BE(Math.max(0, body.length + 4 + skew), 1)
          garbage.push(f)
        }
        client.send(Buffer.concat([...garbage, SYNC, serialize.query('SELECT 1')]))
        await client.untilReady(2, 1000)
        client.close()
      }
      // Before authentication: random bytes as the startup packet, random frames as the
      // password exchange. Both end the connection (FATAL or a close), never the proxy.
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const noise = Buffer.from(Array.from({ length: 1 + random(60) }, () => random(256)))
          const chunks =
            i % 2 === 0
              ? [noise]
              : [startupMessage({ user: 'alice', database: 'shop' }), frame('p', noise)]
          return rawExchange(h.plane.port, chunks, 1000)
        }),
      )
      const other = await h.connect('alice')
      expect((await other.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
    })
  })
}

/** A small deterministic generator: `random(n)` is an integer in [0, n). */
function seeded(seed: number): (n: number) => number {
  let state = seed >>> 0
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return Math.floor((state / 2 ** 32) * n)
  }
}
