import type { Socket } from 'node:net'
import { type SecureContext, TLSSocket } from 'node:tls'
import { asBuffer } from './as-buffer.js'
import { ClientFrameReader } from './client-frames.js'
import { errorResponse } from './error-response.js'
import { StartupCode } from './startup.js'
import { WireError, WireSqlState } from './wire-error.js'

/** Ends the connection once the output before it is sent. */
export const CLOSE: unique symbol = Symbol('close connection')

/** What a message handler yields: output bytes, or `CLOSE`. */
export type MessageOutput = Uint8Array | typeof CLOSE

/** What the socket layer tells the handler about the connection. */
export interface ClientState {
  /** Whether the connection was upgraded to TLS. */
  readonly tls: boolean
}

/** The protocol state machine behind a socket (ConnectionHandler). */
export interface MessageHandler {
  /**
   * Handles one message; its output is written in order, `CLOSE` ends the connection. Undefined
   * means the message was handled at once with no output (most extended-protocol messages).
   */
  onMessage(message: Buffer, state: ClientState): AsyncIterable<MessageOutput> | undefined
  /**
   * The reply when handling a message failed (thrown by `onMessage` or while its output was
   * produced): an ErrorResponse, and `CLOSE` when the error is fatal.
   */
  onFailure(error: unknown): AsyncIterable<MessageOutput>
  /** Releases what the connection holds; safe to call more than once. */
  close(): Promise<void>
}

export interface ClientSocketOptions {
  /** Present when TLS is configured: SSLRequest is answered `S` and the handshake follows. */
  secureContext: SecureContext | undefined
  maxMessageBytes: number
  /** Closes a connection idle (no message in progress) for this long; 0 disables. */
  idleTimeoutMs: number
  /** Answers the StartupMessage with this FATAL error instead (too many connections). */
  refuse?: WireError | undefined
}

/** What the listener can do with a served connection. */
export interface ServedClient {
  /**
   * Ends the connection with FATAL 57P01 once the message in progress (if any) is answered:
   * an in-flight query completes and is audited, nothing new starts.
   */
  shutdown(): void
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>
}

/** Output is sent once this much is buffered, and reading pauses with this much unread. */
const HIGH_WATER = 64 * 1024
const MAX_UNREAD = 1024 * 1024

/**
 * Drives one client connection: frames messages, negotiates TLS, runs each message through the
 * handler strictly in order and writes the output. Output of consecutive messages is batched
 * into one write and sent when a message completes a round trip (Query, Sync, Flush), when it
 * grows past 64 KiB, or when no complete message is left to handle, as a PostgreSQL backend
 * flushes; large results are written with backpressure, so a slow client holds one chunk.
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
  const emit = async (bytes: Uint8Array): Promise<void> => {
    if (bytes.byteLength === 0) return
    out.push(asBuffer(bytes))
    outSize += bytes.byteLength
    if (outSize >= HIGH_WATER && !flush() && !ended) await drained()
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
  const relayOutput = async (
    output: AsyncIterable<MessageOutput>,
    failed = false,
  ): Promise<void> => {
    try {
      for await (const chunk of output) {
        if (chunk === CLOSE) return finish()
        // The client is gone: stop producing its output (the handler audits what was cut short).
        if (ended) return
        await emit(chunk)
      }
    } catch (error) {
      if (failed) throw error
      await relayOutput(handler.onFailure(error), true)
    }
  }
  const handleStartup = async (message: Buffer): Promise<void> => {
    const code = message.readInt32BE(4)
    if (code === StartupCode.SslRequest && message.byteLength === 8) return negotiateTls()
    if (code === StartupCode.Protocol30) {
      reader.typed = true
      if (options.refuse) throw options.refuse
    }
    const output = respond(message)
    if (output) await relayOutput(output)
  }
  /** The handler's output for a message, or its failure reply when it throws at once. */
  const respond = (message: Buffer): AsyncIterable<MessageOutput> | undefined => {
    try {
      return handler.onMessage(message, state)
    } catch (error) {
      return handler.onFailure(error)
    }
  }
  /** Handles one message; a promise only when it has output to wait for. */
  const handle = (message: Buffer): Promise<void> | undefined => {
    if (!reader.typed) return handleStartup(message)
    const output = respond(message)
    if (!output) return undefined
    const type = message[0]
    // Round-trip ends (Query, Sync, Flush) are sent at once, as PostgreSQL does.
    const roundTrip = type === 0x51 || type === 0x53 || type === 0x48
    if (!roundTrip) return relayOutput(output)
    return relayOutput(output).then(() => {
      flush()
    })
  }

  const pump = async (): Promise<void> => {
    busy = true
    try {
      for (;;) {
        if (shuttingDown) return fail(adminShutdown())
        const message = reader.next()
        if (!message) break
        const pending = handle(message)
        if (pending) await pending
        if (ended) return
      }
      if (shuttingDown) return fail(adminShutdown())
      flush()
      if (stream.isPaused()) stream.resume()
    } catch (error) {
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
