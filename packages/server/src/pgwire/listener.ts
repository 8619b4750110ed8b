import { createServer, type Server, type Socket } from 'node:net'
import { createSecureContext } from 'node:tls'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { Admission, type LoginEvent } from './admission.js'
import { type ServedClient, serveClient } from './client-socket.js'
import { ConnectionHandler, type ConnectionServices } from './connection-handler.js'

/** Options of the pgwire listener. */
export interface ListenerOptions {
  host: string
  port: number
  /** Certificate and key (PEM) for SSLRequest; without them SSLRequest is answered 'N'. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined
  /** Largest client message accepted; a longer one ends the connection (54000). */
  maxMessageBytes: number
  /** Connections idle this long are closed (57P05); 0 disables. */
  idleTimeoutMs: number
  /** Authenticated sessions beyond this many are refused (53300). */
  maxConnections: number
  /** Start-up, TLS and authentication must finish within this long (0: no limit). */
  loginTimeoutMs: number
  /** Connections not yet authenticated, in all; past it the oldest is dropped. */
  maxPendingConnections: number
  /** The same per source address. */
  maxPendingPerAddress: number
  /** On close, how long in-flight statements may run before their connections are cut. */
  shutdownGraceMs: number
  services: ConnectionServices
  /** Operator log of logins that did not finish (structured, for fail2ban-style tools). */
  onLoginEvent?: ((event: LoginEvent) => void) | undefined
}

/** A listening pgwire server. */
export interface Listener {
  readonly server: Server
  /** The bound port (useful with port 0). */
  readonly port: number
  /**
   * Stops accepting, lets each statement in progress finish (up to the grace period), ends every
   * connection with FATAL 57P01 and waits for their cleanup.
   */
  close(): Promise<void>
}

/** Starts the pgwire listener: one `ConnectionHandler` per socket, driven by `serveClient`. */
export async function startListener(options: ListenerOptions): Promise<Listener> {
  const sockets = new Map<Socket, { handler: ConnectionHandler; client: ServedClient }>()
  const secureContext = options.tls
    ? createSecureContext({ cert: options.tls.cert, key: options.tls.key })
    : undefined
  const admission = new Admission(options)
  const server = createServer((socket) => {
    // Without it an extended-protocol round trip waits for Nagle's delayed ACK (≈40 ms).
    socket.setNoDelay(true)
    const evicted = admission.arrive(socket)
    if (evicted) {
      options.onLoginEvent?.({ event: 'login_dropped', address: evicted.remoteAddress })
      evicted.destroy()
    }
    const handler = new ConnectionHandler(
      options.services,
      { take: () => admission.authenticate(socket), release: () => admission.endSession() },
      {
        address: socket.remoteAddress ?? '',
        loginDeadline:
          options.loginTimeoutMs > 0
            ? Date.now() + options.loginTimeoutMs
            : Number.POSITIVE_INFINITY,
      },
    )
    socket.on('error', () => {})
    socket.on('close', () => {
      sockets.delete(socket)
      admission.leave(socket)
      clearTimeout(loginTimer)
      void handler.close()
    })
    const client = serveClient(socket, handler, {
      secureContext,
      maxMessageBytes: options.maxMessageBytes,
      idleTimeoutMs: options.idleTimeoutMs,
    })
    // The handshake budget: start-up, TLS and authentication, as PostgreSQL's
    // authentication_timeout. Past it the connection ends, FATAL where the protocol allows.
    const loginTimer =
      options.loginTimeoutMs > 0
        ? setTimeout(() => {
            if (!admission.isPending(socket)) return
            admission.leave(socket)
            options.onLoginEvent?.({ event: 'login_timeout', address: socket.remoteAddress })
            client.abort(loginTimeout())
          }, options.loginTimeoutMs)
        : undefined
    loginTimer?.unref()
    sockets.set(socket, { handler, client })
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
      const open = [...sockets.entries()]
      for (const [, { client }] of open) client.shutdown()
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.shutdownGraceMs)
      })
      await Promise.race([Promise.all(open.map(([, { client }]) => client.closed)), grace])
      clearTimeout(timer)
      for (const [socket] of open) socket.destroy()
      await Promise.all(open.map(([, { handler }]) => handler.close()))
      await closed
    },
  }
}

function loginTimeout(): WireError {
  return WireError.fatal(WireSqlState.QueryCanceled, 'canceling authentication due to timeout')
}
