import type { Socket } from 'node:net'
import { type SecureContext, TLSSocket } from 'node:tls'
import { asBuffer } from '../wire/as-buffer.js'
import { errorResponse } from '../wire/error-response.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { ClientFrameReader } from './client-frames.js'
import { Frontend } from './frontend-messages.js'
import { StartupCode } from './startup.js'
import { atTurnEnd } from './turn-end.js'

/**
 * Where a handler writes its replies. Writes are queued and sent together when the message ends
 * a round trip, so a handler writes each piece as it has it.
 */
export interface ClientOutput {
  /**
   * Queues bytes for the client. Returns a promise when the client is slow to read: producing
   * more output should wait for it (backpressure); otherwise undefined.
   */
  write(bytes: Uint8Array): Promise<void> | undefined
  /** Ends the connection once the output queued before it is sent. */
  close(): void
  /** True once the connection has ended: the client is gone, produce nothing more. */
  readonly ended: boolean
}

/** What the socket layer tells the handler about the connection. */
export interface ClientState {
  /** Whether the connection was upgraded to TLS. */
  readonly tls: boolean
}

/** The protocol state machine behind a socket (ConnectionHandler). */
export interface MessageHandler {
  /**
   * Handles one message, writing its replies to `out`. Returns a promise only when it has to
   * wait (for the upstream's answer, the store, a slow client); most extended-protocol messages
   * are handled at once.
   */
  onMessage(message: Buffer, state: ClientState, out: ClientOutput): Promise<void> | undefined
  /**
   * Replies when handling a message failed (thrown by `onMessage` or rejected by its promise):
   * an ErrorResponse, and closing the connection when the error is fatal.
   */
  onFailure(error: unknown, out: ClientOutput): Promise<void>
  /** Every complete message received so far is handled (the client may now think a while). */
  drained?(): void
  /**
   * A typed message refused before it was read (too long, or an impossible length): its type
   * and declared length, and the FATAL error that ends the connection.
   */
  unreadMessage?(code: number, length: number, error: unknown): void
  /** Releases what the connection holds; safe to call more than once. */
  close(): Promise<void>
}

export interface ClientSocketOptions {
  /** Present when TLS is configured: SSLRequest is answered `S` and the handshake follows. */
  secureContext: SecureContext | undefined
  maxMessageBytes: number
  /** Closes a connection idle (no message in progress) for this long; 0 disables. */
  idleTimeoutMs: number
}

/** What the listener can do with a served connection. */
export interface ServedClient {
  /**
   * Ends the connection with FATAL 57P01 once the message in progress (if any) is answered:
   * an in-flight query completes and is audited, nothing new starts.
   */
  shutdown(): void
  /**
   * Ends the connection now with a FATAL error (login timeout), whatever it is doing; the
   * socket is destroyed shortly after, even if the peer never reads.
   */
  abort(error: WireError): void
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>
}

/** Output is sent once this much is buffered, and reading pauses with this much unread. */
const HIGH_WATER = 64 * 1024
const MAX_UNREAD = 1024 * 1024

/**
 * Drives one client connection: frames messages, negotiates TLS, runs each message through the
 * handler strictly in order and writes the output. Output of consecutive messages is batched
 * into one write and sent when a message completes a round trip (Query, Sync, Flush) or when no
 * complete message is left to handle, as a PostgreSQL backend flushes, at the end of the
 * event-loop turn (turn-end.ts); at once when it grows past 64 KiB: large results are written
 * with backpressure, so a slow client holds one chunk.
 */
export function serveClient(
  socket: Socket,
  handler: MessageHandler,
  options: ClientSocketOptions,
): ServedClient {
  const reader = new ClientFrameReader(options.maxMessageBytes)
  let stream: Socket = socket
  let tls = false
  let busy = false
  let ended = false
  let shuttingDown = false
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  let out: Buffer[] = []
  let outSize = 0
  /** Sends the output at the end of this turn (turn-end.ts): once, however many round trips end. */
  let flushDueQueued = false
  const dueFlush = () => {
    flushDueQueued = false
    flush()
  }
  const flushSoon = () => {
    if (flushDueQueued || outSize === 0) return
    flushDueQueued = true
    atTurnEnd(dueFlush)
  }

  const flush = (): boolean => {
    if (outSize === 0 || ended) return true
    const bytes = out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out, outSize)
    out = []
    outSize = 0
    return stream.write(bytes)
  }
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done)
        stream.off('close', done)
        resolve()
      }
      stream.once('drain', done)
      stream.once('close', done)
    })
  const emit = (bytes: Uint8Array): Promise<void> | undefined => {
    if (bytes.byteLength === 0 || ended) return undefined
    out.push(asBuffer(bytes))
    outSize += bytes.byteLength
    if (outSize >= HIGH_WATER && !flush() && !ended) return drained()
    return undefined
  }
  const finish = (): void => {
    if (ended) return
    flush()
    ended = true
    stream.end()
    void handler.close()
  }
  const fail = (error: unknown): void => {
    const fields = error instanceof WireError ? error.fields : internalError()
    const bytes = errorResponse({ ...fields, severity: 'FATAL' })
    out.push(bytes)
    outSize += bytes.byteLength
    finish()
  }

  /** SSLRequest: `S` and a TLS handshake when configured, else `N`; only before startup. */
  const negotiateTls = async (): Promise<void> => {
    if (tls || reader.pendingBytes > 0) {
      // Bytes sent after SSLRequest before the handshake could be injected by a third party.
      throw WireError.fatal(
        WireSqlState.ProtocolViolation,
        'received unencrypted data after SSL request',
      )
    }
    if (!options.secureContext) {
      stream.write('N')
      return
    }
    stream.off('data', onData)
    stream.write('S')
    const secure = new TLSSocket(stream, { isServer: true, secureContext: options.secureContext })
    await new Promise<void>((resolve, reject) => {
      secure.once('secure', resolve)
      secure.once('error', reject)
      secure.once('close', () => reject(new Error('closed during the TLS handshake')))
    })
    secure.on('error', () => {})
    secure.on('close', () => {
      ended = true
      void handler.close()
    })
    secure.on('data', onData)
    stream = secure
    tls = true
  }

  const state: ClientState = {
    get tls() {
      return tls
    },
  }
  const output: ClientOutput = {
    write: emit,
    close: finish,
    get ended() {
      return ended
    },
  }
  const handleStartup = async (message: Buffer): Promise<void> => {
    const code = message.readInt32BE(4)
    if (code === StartupCode.SslRequest && message.byteLength === 8) return negotiateTls()
    if (code === StartupCode.Protocol30) {
      reader.typed = true
    }
    await respond(message)
  }
  /**
   * Runs the handler on a message; its failure reply when it throws or rejects. A promise only
   * when the handler has to wait: most extended-protocol messages are handled at once.
   */
  const respond = (message: Buffer): Promise<void> | undefined => {
    let pending: Promise<void> | undefined
    try {
      pending = handler.onMessage(message, state, output)
    } catch (error) {
      return handler.onFailure(error, output)
    }
    return pending && settle(pending)
  }
  const settle = async (pending: Promise<void>): Promise<void> => {
    try {
      await pending
    } catch (error) {
      await handler.onFailure(error, output)
    }
  }

  const pump = async (): Promise<void> => {
    busy = true
    try {
      for (;;) {
        if (shuttingDown) return fail(adminShutdown())
        const message = reader.next()
        if (!message) break
        if (!reader.typed) await handleStartup(message)
        else {
          const pending = respond(message)
          if (pending) await pending
          // Round-trip ends (Query, Sync, Flush) are sent, as PostgreSQL does: at this turn's end.
          const type = message[0]
          if (type === Frontend.Query || type === Frontend.Sync || type === Frontend.Flush) {
            flushSoon()
          }
        }
        if (ended) return
      }
      if (shuttingDown) return fail(adminShutdown())
      handler.drained?.()
      flushSoon()
      if (stream.isPaused()) stream.resume()
    } catch (error) {
      const unread = reader.refused
      if (unread) handler.unreadMessage?.(unread.code, unread.length, error)
      fail(error)
    } finally {
      busy = false
    }
  }

  function onData(chunk: Buffer): void {
    if (ended) return
    reader.push(chunk)
    if (reader.pendingBytes > MAX_UNREAD) stream.pause()
    if (!busy) void pump()
  }

  socket.on('data', onData)
  socket.on('close', () => {
    ended = true
  })
  const served: ServedClient = {
    shutdown() {
      shuttingDown = true
      if (!busy && !ended) fail(adminShutdown())
    },
    abort(error) {
      if (!ended) fail(error)
      setTimeout(() => socket.destroy(), 250).unref()
    },
    closed,
  }
  // TLS traffic passes through the raw socket, so its inactivity timer covers both.
  if (options.idleTimeoutMs > 0) {
    socket.setTimeout(options.idleTimeoutMs, () => {
      if (busy || ended) return
      fail(
        WireError.fatal(
          WireSqlState.IdleSessionTimeout,
          'terminating connection due to idle-session timeout',
        ),
      )
    })
  }
  return served
}

function adminShutdown(): WireError {
  return WireError.fatal(
    WireSqlState.AdminShutdown,
    'terminating connection due to administrator command',
  )
}

function internalError() {
  return { severity: 'FATAL', code: WireSqlState.InternalError, message: 'internal error' }
}
