import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { codeOf } from './fixtures/failure.js'
import { pgliteHarness } from './fixtures/harness.js'
import { errorCode, rawExchange, startupMessage, startupPacket } from './fixtures/raw-socket.js'
import { selfSignedPair } from './fixtures/self-signed.js'

/** SSLRequest's request code. */
const SSL_REQUEST = 80877103

/** Opens `count` sockets that send `first` (if any) and then nothing. */
async function openSilent(port: number, count: number, first?: Buffer): Promise<Socket[]> {
  const sockets: Socket[] = []
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, () => {
        const socket = connect({ host: '127.0.0.1', port })
        socket.on('error', () => {})
        // Read what the proxy sends (its FATAL), so its close is seen.
        socket.resume()
        sockets.push(socket)
        return new Promise<void>((resolve) =>
          socket.once('connect', () => {
            if (first) socket.write(first)
            resolve()
          }),
        )
      }),
    )
  }
  return sockets
}

/** Waits until every socket was closed by the other end (or fails after `ms`). */
async function allClosed(sockets: readonly Socket[], ms: number): Promise<boolean> {
  const until = Date.now() + ms
  for (;;) {
    if (sockets.every(isClosed)) return true
    if (Date.now() > until) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function isClosed(socket: Socket): boolean {
  return socket.destroyed || socket.readableEnded
}

describe('logins: a handshake budget, pending connections kept apart from sessions', () => {
  it('lets real users in past 500 silent sockets and 100 stalled TLS handshakes, then closes those', async (ctx) => {
    const pair = selfSignedPair()
    if (!pair) return ctx.skip(true, 'openssl is not installed: cannot make a test certificate')
    const h = await pgliteHarness({
      plane: { tls: pair, loginTimeoutMs: 2000, maxConnections: 3, maxPendingPerAddress: 1000 },
    })
    try {
      const port = h.plane.port
      const silent = await openSilent(port, 500)
      const stalled = await openSilent(port, 100, startupPacket(SSL_REQUEST))
      // Silent and stalled connections take no session place: three users fit, a fourth does not.
      const users = await Promise.all([
        h.connect('alice'),
        h.connect('alice', { ssl: { rejectUnauthorized: false } }),
        h.connect('alice'),
      ])
      for (const user of users) {
        expect((await user.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
      }
      expect(await codeOf(h.connect('alice'))).toBe('53300')
      expect(await allClosed([...silent, ...stalled], 8000)).toBe(true)
      await users[0]?.end()
      const next = await h.connect('alice')
      expect((await next.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    } finally {
      await h.close()
    }
  }, 60_000)

  it('ends a login stuck in the password exchange with 57014 after the timeout', async () => {
    const events: { event: string; address: string | undefined }[] = []
    const h = await pgliteHarness({
      plane: { loginTimeoutMs: 500, onLoginEvent: (e) => events.push(e) },
    })
    try {
      const answer = await rawExchange(
        h.plane.port,
        [startupMessage({ user: 'alice', database: 'shop' })],
        3000,
      )
      expect(errorCode(answer)).toBe('57014')
      expect(answer.toString('latin1')).toContain('canceling authentication due to timeout')
      expect(events).toEqual([
        { event: 'login_timeout', address: expect.stringContaining('127.0.0.1') },
      ])
    } finally {
      await h.close()
    }
  })

  it('drops the oldest pending connection of an address when its places are full', async () => {
    const events: string[] = []
    const h = await pgliteHarness({
      plane: {
        loginTimeoutMs: 30_000,
        maxPendingPerAddress: 10,
        onLoginEvent: (e) => events.push(e.event),
      },
    })
    try {
      const first = await openSilent(h.plane.port, 10)
      const more = await openSilent(h.plane.port, 5)
      // The five newest pushed out the five oldest; the rest wait for their budget.
      expect(await allClosed(first.slice(0, 5), 3000)).toBe(true)
      expect(events).toEqual(Array(5).fill('login_dropped'))
      expect([...first.slice(5), ...more].some(isClosed)).toBe(false)
      const alice = await h.connect('alice')
      expect((await alice.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      for (const s of [...first, ...more]) s.destroy()
    } finally {
      await h.close()
    }
  })
})
