/**
 * An upstream that accepts TCP connections and then says nothing (a hung server, a black-holed
 * network): every attempt ends within the connect timeout with a clean FATAL 08006, logged once
 * as an outage; no client waits longer.
 */
import { createServer, type Socket } from 'node:net'
import pg from 'pg'
import { expect, it } from 'vitest'
import { createDataPlane } from '../src/index.js'
import type { UpstreamEvent } from '../src/upstream/upstream.types.js'
import { failure } from './fixtures/failure.js'
import { PASSWORD, seedShop } from './fixtures/seed-store.js'
import { createTestStore } from './fixtures/snapshots.js'

it('ends an upstream connect that hangs within the connect timeout, with 08006', async () => {
  const held: Socket[] = []
  const silent = createServer((socket) => {
    held.push(socket)
    socket.on('error', () => {})
    // Read (and ignore) the startup packet, so the end of the connection is seen.
    socket.resume()
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const address = silent.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const store = await createTestStore({ secretKey: 'palisade-connect-timeout-tests-only' })
  const events: UpstreamEvent[] = []
  try {
    await seedShop(store, {
      ds_type: 'postgres',
      config: { host: '127.0.0.1', port, database: 'shop', username: 'x', sslmode: 'disable' },
    })
    for (const poolMode of ['session', 'transaction'] as const) {
      const plane = await createDataPlane({
        store,
        port: 0,
        log: () => {},
        poolMode,
        upstreamConnectTimeoutMs: 300,
        onUpstreamEvent: (e) => events.push(e),
      })
      try {
        const started = Date.now()
        const client = new pg.Client({
          host: '127.0.0.1',
          port: plane.port,
          user: 'alice',
          password: PASSWORD,
          database: 'shop',
        })
        client.on('error', () => {})
        expect(await failure(client.connect())).toEqual({
          code: '08006',
          message: 'upstream connection lost',
        })
        expect(Date.now() - started).toBeLessThan(2000)
      } finally {
        await plane.close()
      }
    }
    // Per plane the outage once (logged); besides, every failed attempt (counted in the metrics).
    const failed = events.filter((e) => e.event === 'upstream_connect_failed')
    expect(
      events.filter((e) => e.event !== 'upstream_connect_failed').map((e) => [e.event, e.error]),
    ).toEqual([
      ['upstream_unreachable', 'ETIMEDOUT'],
      ['upstream_unreachable', 'ETIMEDOUT'],
    ])
    expect(failed.length).toBeGreaterThanOrEqual(2)
    for (const e of failed) expect(e.error).toBe('ETIMEDOUT')
    // The hung attempts were given up: their sockets are closed.
    await new Promise((r) => setTimeout(r, 50))
    expect(held.every((s) => s.destroyed || s.readableEnded)).toBe(true)
  } finally {
    for (const s of held) s.destroy()
    silent.close()
    await store.close()
  }
})
