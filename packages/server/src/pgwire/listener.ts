import { createServer, type Server, type Socket } from 'node:net'
import type { TlsOptions } from 'pg-gateway'
import { fromNodeSocket } from 'pg-gateway/node'
import { ConnectionHandler, type ConnectionServices } from './connection-handler.js'

/** Options of the pgwire listener. */
export interface ListenerOptions {
  host: string
  port: number
  /** Certificate and key (PEM) for SSLRequest; without them SSLRequest is answered 'N'. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined
  services: ConnectionServices
}

/** A listening pgwire server. */
export interface Listener {
  readonly server: Server
  /** The bound port (useful with port 0). */
  readonly port: number
  /** Stops accepting, closes open connections and waits for their cleanup. */
  close(): Promise<void>
}

function toArrayBuffer(value: string | Buffer): ArrayBuffer {
  const buf = typeof value === 'string' ? Buffer.from(value) : value
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer
}

/** Starts the pgwire listener: one `ConnectionHandler` per socket over pg-gateway. */
export async function startListener(options: ListenerOptions): Promise<Listener> {
  const sockets = new Map<Socket, ConnectionHandler>()
  const tls: TlsOptions | undefined = options.tls
    ? { cert: toArrayBuffer(options.tls.cert), key: toArrayBuffer(options.tls.key) }
    : undefined
  const server = createServer((socket) => {
    // Without it an extended-protocol round trip waits for Nagle's delayed ACK (≈40 ms).
    socket.setNoDelay(true)
    const handler = new ConnectionHandler(options.services)
    sockets.set(socket, handler)
    socket.on('error', () => {})
    socket.on('close', () => {
      sockets.delete(socket)
      void handler.close()
    })
    fromNodeSocket(socket, {
      tls,
      onMessage: (bytes, state) => handler.onMessage(bytes, state),
    }).catch((error: unknown) => {
      options.services.log('data plane: connection setup failed', error)
      socket.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  return {
    server,
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      const handlers = [...sockets.entries()]
      for (const [socket] of handlers) socket.destroy()
      await Promise.all(handlers.map(([, h]) => h.close()))
      await closed
    },
  }
}
