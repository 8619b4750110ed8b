import pg from 'pg'
import { serialize } from 'pg-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codeOf } from './fixtures/failure.js'
import type { Harness, MakeHarness } from './fixtures/harness.js'
import { errorCode, rawExchange, startupMessage } from './fixtures/raw-socket.js'
import { PASSWORD } from './fixtures/seed-store.js'
import { framesOf, WireClient } from './fixtures/wire-client.js'

/** Audit rows whose original query contains `marker`. */
async function auditedWith(h: Harness, marker: string) {
  return (await h.auditRows()).filter((r) => r.original_query.includes(marker))
}

/**
 * What hostile or broken clients and a failing upstream must not do to the proxy (issue:
 * robustness): each case checks the proxy keeps serving, and that every query that reached it
 * has its audit row.
 */
export function runRobustnessCases(name: string, makeHarness: MakeHarness): void {
  describe(`robustness over ${name}`, () => {
    let h: Harness
    beforeAll(async () => {
      h = await makeHarness({ plane: { maxMessageBytes: 1024 * 1024 } })
    })
    afterAll(() => h.close())

    const stillServes = async () => {
      const client = await h.connect('alice')
      expect((await client.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
    }

    it('refuses a 2 GB length header before buffering anything, at startup and after it', async () => {
      const startup = Buffer.alloc(8)
      startup.writeInt32BE(0x7fffffff, 0)
      startup.writeInt32BE(196608, 4)
      expect(errorCode(await rawExchange(h.plane.port, [startup], 1000))).toBe('08P01')
      const client = await WireClient.connect(h.plane.port)
      const huge = Buffer.from([0x51, 0x7f, 0xff, 0xff, 0xff, 0x53, 0x45])
      client.send(huge)
      const frames = await client.untilReady(1, 5000)
      expect(client.closed).toBe(true)
      expect(errorCode(Buffer.concat(framesOf(frames, 'E').map((f) => f.bytes)))).toBe('54000')
      await stillServes()
    })

    it('answers garbage and a truncated startup with 08P01 and keeps serving', async () => {
      expect(
        errorCode(await rawExchange(h.plane.port, [Buffer.from('GET / HTTP/1.1\r\n\r\n')], 1000)),
      ).toBe('08P01')
      // A startup that announces more bytes than it sends: the proxy waits, then the client leaves.
      const partial = startupMessage({ user: 'alice', database: 'shop' }).subarray(0, 12)
      expect(await rawExchange(h.plane.port, [partial], 300)).toHaveLength(0)
      await stillServes()
    })

    it('answers 1,000 pipelined queries without Sync in order, and audits each', async () => {
      const marker = `pipelined_${Date.now()}`
      const client = await WireClient.connect(h.plane.port)
      const batch: Buffer[] = []
      for (let i = 0; i < 1000; i++) {
        batch.push(
          serialize.parse({ text: `SELECT ${i} AS ${marker}, count(*) FROM orders` }),
          serialize.bind({}),
          serialize.execute({}),
        )
      }
      batch.push(serialize.sync())
      client.send(Buffer.concat(batch))
      const frames = await client.untilReady(1)
      expect(framesOf(frames, 'E')).toHaveLength(0)
      expect(framesOf(frames, 'C')).toHaveLength(1000)
      const simple = Buffer.concat(
        Array.from({ length: 1000 }, (_, i) => serialize.query(`SELECT ${i} AS ${marker}_q`)),
      )
      client.send(simple)
      expect(framesOf(await client.untilReady(1000), 'Z')).toHaveLength(1000)
      client.close()
      expect(await auditedWith(h, marker)).toHaveLength(2000)
      await stillServes()
    })

    it('survives a client that disconnects in the middle of a large result', async () => {
      const marker = `abandoned_${Date.now()}`
      for (let round = 0; round < 3; round++) {
        const client = await WireClient.connect(h.plane.port)
        const gone = client.nextBytes().then(() => client.close())
        client.send(serialize.query(`SELECT g AS ${marker} FROM generate_series(1, 300000) g`))
        await gone
      }
      await stillServes()
      // Every abandoned query still has its audit row, once its upstream answer ended.
      await expect
        .poll(() => auditedWith(h, marker).then((r) => r.length), { timeout: 10_000 })
        .toBe(3)
    })

    it('serves 200 clients that connect and query at once', async () => {
      const marker = `crowd_${Date.now()}`
      const results = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const client = new pg.Client({
            host: '127.0.0.1',
            port: h.plane.port,
            user: i % 2 ? 'alice' : 'carol',
            password: PASSWORD,
            database: 'shop',
          })
          await client.connect()
          try {
            const { rows } = await client.query(`SELECT count(*)::int AS ${marker} FROM orders`)
            return rows[0]?.[marker] as number
          } finally {
            await client.end()
          }
        }),
      )
      // alice sees her tenant's 2 orders, carol (no policy) all 4.
      expect(results.filter((n) => n === 2)).toHaveLength(100)
      expect(results.filter((n) => n === 4)).toHaveLength(100)
      expect(await auditedWith(h, marker)).toHaveLength(200)
    }, 60_000)
  })

  describe(`shutdown over ${name}`, () => {
    it('lets a statement in progress finish and be audited, then ends every connection with 57P01', async () => {
      const own = await makeHarness({ plane: { shutdownGraceMs: 20_000 } })
      try {
        const marker = `draining_${Date.now()}`
        const idle = await own.connect('alice')
        const idleEnded = new Promise<unknown>((resolve) => idle.once('error', resolve))
        const busy = await own.connect('alice')
        const running = busy.query(
          `SELECT count(*)::int AS ${marker} FROM generate_series(1, 2000000) g`,
        )
        await new Promise((r) => setTimeout(r, 50))
        const closing = own.plane.close()
        expect((await running).rows).toEqual([{ [marker]: 2000000 }])
        expect(await idleEnded).toMatchObject({ code: '57P01' })
        await closing
        expect(await auditedWith(own, marker)).toMatchObject([{ status: 'success' }])
      } finally {
        await own.close()
      }
    })
  })

  describe(`connection limits over ${name}`, () => {
    it('closes an idle connection with 57P05 and refuses connections beyond the limit with 53300', async () => {
      const limited = await makeHarness({ plane: { idleTimeoutMs: 300, maxConnections: 2 } })
      try {
        const first = await limited.connect('alice')
        const second = await limited.connect('alice')
        expect(await codeOf(limited.connect('alice'))).toBe('53300')
        const ended = new Promise<unknown>((resolve) => first.once('error', resolve))
        await new Promise((r) => setTimeout(r, 700))
        expect((await ended) as { code?: string }).toMatchObject({ code: '57P05' })
        await second.end().catch(() => {})
        // Both closed: the limit has room again.
        await new Promise((r) => setTimeout(r, 100))
        const again = await limited.connect('alice')
        expect((await again.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }])
      } finally {
        await limited.close()
      }
    })
  })
}

/** PostgreSQL tier only: the upstream goes away and comes back while clients are connected. */
export function runUpstreamRestartCase(makeHarness: MakeHarness, name = 'PostgreSQL'): void {
  describe(`an upstream that goes away and comes back, over ${name}`, () => {
    it('fails the connected clients with 08006, keeps the proxy up and serves new clients', async () => {
      const events: { event: string; datasource: string }[] = []
      const h = await makeHarness({
        relayUpstream: true,
        plane: { onUpstreamEvent: (e) => events.push(e) },
      })
      try {
        const relay = h.upstreamRelay
        if (!relay) throw new Error('the harness has no upstream relay')
        const clients = await Promise.all([1, 2, 3].map(() => h.connect('alice')))
        for (const c of clients) await c.query('SELECT 1')
        await relay.cut()
        for (const c of clients)
          expect(await codeOf(c.query('SELECT 2 AS after_cut'))).toBe('08006')
        // Every statement that reached Palisade has its audit row, failed ones included.
        const failed = (await h.auditRows()).filter(
          (r) => r.original_query === 'SELECT 2 AS after_cut',
        )
        expect(failed.map((r) => r.status)).toEqual(['error', 'error', 'error'])
        expect(await codeOf(h.connect('alice'))).toBe('08006')
        // The operator hears of the outage once, with the datasource; each failed attempt to
        // reconnect is an event too (counted in the metrics, logged at debug only).
        const outage = () => events.filter((e) => e.event !== 'upstream_connect_failed')
        expect(outage()).toEqual([
          expect.objectContaining({ event: 'upstream_unreachable', datasource: 'shop' }),
        ])
        expect(events.filter((e) => e.event === 'upstream_connect_failed').length).toBeGreaterThan(
          0,
        )
        await relay.restore()
        const fresh = await h.connect('alice')
        expect(outage().map((e) => e.event)).toEqual(['upstream_unreachable', 'upstream_recovered'])
        expect((await fresh.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([
          { n: 2 },
        ])
      } finally {
        await h.close()
      }
    }, 60_000)
  })
}
