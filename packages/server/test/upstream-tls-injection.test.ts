/**
 * Bytes an upstream (or anyone on the path) sends in the clear after answering SSLRequest with
 * `S` are never read as the server's: only what arrives over TLS counts, as libpq has done since
 * CVE-2021-23222. A fake upstream answers `S` with a forged login glued to it, then completes
 * the handshake and logs in for real over TLS.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { createSecureContext, TLSSocket } from 'node:tls'
import { afterEach, describe, expect, it } from 'vitest'
import { connectPostgres } from '../src/upstream/postgres-connect.js'
import { selfSignedPair } from './fixtures/self-signed.js'

const pair = selfSignedPair()

/** A backend message: code, length, body. */
function message(code: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5)
  header.write(code, 0, 'latin1')
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}
const parameterStatus = (name: string, value: string) =>
  message('S', Buffer.from(`${name}\0${value}\0`))
const AUTH_OK = message('R', Buffer.from([0, 0, 0, 0]))
const READY = message('Z', Buffer.from('I'))
const keyData = (pid: number) => {
  const body = Buffer.alloc(8)
  body.writeInt32BE(pid, 0)
  body.writeInt32BE(7, 4)
  return message('K', body)
}

let server: Server | undefined
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
})

describe.skipIf(!pair)('upstream TLS: bytes in the clear before the handshake', () => {
  it('are dropped: the login is read from the TLS stream only', async () => {
    const context = createSecureContext({ cert: pair?.cert, key: pair?.key })
    server = createServer((raw: Socket) => {
      raw.once('data', () => {
        // `S`, then a whole forged login in the clear, in the same packet.
        raw.write(
          Buffer.concat([
            Buffer.from('S'),
            AUTH_OK,
            parameterStatus('injected', 'yes'),
            keyData(666),
            READY,
          ]),
        )
        const secure = new TLSSocket(raw, { isServer: true, secureContext: context })
        let startup = true
        secure.on('data', () => {
          if (startup) {
            startup = false
            secure.write(
              Buffer.concat([
                AUTH_OK,
                parameterStatus('server_version', '15.0'),
                keyData(42),
                READY,
              ]),
            )
          } else secure.write(READY) // the cast check: no unsafe cast
        })
        secure.on('error', () => {})
      })
      raw.on('error', () => {})
    })
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const backend = await connectPostgres({
      kind: 'postgres',
      datasourceName: 'fake',
      host: '127.0.0.1',
      port,
      database: 'shop',
      user: 'alice',
      password: null,
      sslmode: 'require',
      statementTimeoutMs: 0,
      poolSize: 1,
      connectTimeoutMs: 5000,
    })
    try {
      expect(backend.socket).toBeInstanceOf(TLSSocket)
      expect(backend.parameters.has('injected')).toBe(false)
      expect(backend.parameters.get('server_version')).toBe('15.0')
      expect(backend.processId).toBe(42)
    } finally {
      backend.socket.destroy()
    }
  })
})
