import { connect, createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { PostgresSession, UPSTREAM_HIGH_WATER } from '../src/upstream/postgres-upstream.js'
import { SocketReads } from '../src/upstream/socket-reads.js'
import type { PostgresUpstreamConfig } from '../src/upstream/upstream.types.js'

/** A DataRow of one text column, `size` bytes long. */
function dataRow(size: number): Buffer {
  const row = Buffer.alloc(1 + 4 + 2 + 4 + size, 0x61)
  row[0] = 'D'.charCodeAt(0)
  row.writeInt32BE(row.length - 1, 1)
  row.writeInt16BE(1, 5)
  row.writeInt32BE(size, 7)
  return row
}

const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5, 0x49])

const config: PostgresUpstreamConfig = {
  kind: 'postgres',
  datasourceName: 'fake',
  host: '127.0.0.1',
  port: 0,
  database: 'fake',
  user: 'fake',
  statementTimeoutMs: 0,
  poolSize: 1,
}

let server: Server | undefined
let client: Socket | undefined

afterEach(async () => {
  client?.destroy()
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
})

describe('PostgresSession backpressure', () => {
  it('stops reading a large answer nobody takes, and reads on when it is taken', async () => {
    const rows = 4096
    const rowBytes = 2048
    const total = rows * (rowBytes + 11) + readyForQuery.length
    // A fake upstream that answers with 8 MB of rows at once.
    server = createServer((socket) => {
      for (let i = 0; i < rows; i++) socket.write(dataRow(rowBytes))
      socket.write(readyForQuery)
    })
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    // Read as the pool's sessions read: into the shared buffer, not through `data` events.
    const reads = new SocketReads()
    const socket = connect({ port, host: '127.0.0.1', onread: reads.onread })
    client = socket
    await new Promise((resolve) => socket.once('connect', resolve))
    const session = new PostgresSession(
      { socket, reads, parameters: new Map(), processId: 1, secretKey: 2 },
      config,
      () => {},
    )

    // Nobody reads for a while: the proxy holds about the high-water mark, not the 8 MB.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(socket.isPaused()).toBe(true)
    const first = await session.read()
    const firstBytes = first.reduce((sum, f) => sum + f.bytes.byteLength, 0)
    expect(firstBytes).toBeGreaterThanOrEqual(UPSTREAM_HIGH_WATER)
    expect(firstBytes).toBeLessThan(UPSTREAM_HIGH_WATER + 256 * 1024)

    // Taking it resumes reading: the whole answer arrives, in order and intact.
    let received = firstBytes
    let frames = first.length
    let last = first.at(-1)
    while (last?.code !== 0x5a) {
      const next = await session.read()
      received += next.reduce((sum, f) => sum + f.bytes.byteLength, 0)
      frames += next.length
      last = next.at(-1)
    }
    expect(frames).toBe(rows + 1)
    expect(received).toBe(total)
  })
})
