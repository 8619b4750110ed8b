import { createHash } from 'node:crypto'
import { isIP, connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { serialize } from 'pg-protocol'
import { FrameSplitter } from './frame-splitter.js'
import { ScramClient } from './scram-client.js'
import { SocketReads } from './socket-reads.js'
import { decodeStartupMessage, type StartupMessage } from './startup-messages.js'
import { UNSAFE_CASTS_QUERY, UnsafeUpstreamError } from './unsafe-casts.js'
import type { PostgresUpstreamConfig } from './upstream.types.js'

/** A PostgreSQL backend after startup: ready for queries, with its parameters and cancel key. */
export interface PostgresBackend {
  socket: Socket
  /** Where the socket's bytes arrive (its `data` events are not emitted). */
  reads: SocketReads
  parameters: Map<string, string>
  processId: number
  secretKey: number
}

/** How long opening an upstream session may take when the datasource does not say. */
export const DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS = 10_000

/**
 * Opens a TCP (optionally TLS) socket to the upstream, honouring `sslmode`. `signal` aborts the
 * attempt (the socket is destroyed, the promise rejects). With `reads`, the socket's bytes go
 * there instead of to `data` events (socket-reads.ts).
 */
export async function openSocket(
  config: PostgresUpstreamConfig,
  signal?: AbortSignal,
  reads?: SocketReads,
): Promise<Socket> {
  const socket = netConnect({
    host: config.host,
    port: config.port,
    ...(reads ? { onread: reads.onread } : {}),
  })
  signal?.addEventListener('abort', () => socket.destroy(timedOut()), { once: true })
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const mode = config.sslmode ?? 'prefer'
  if (mode === 'disable') return socket
  socket.write(serialize.requestSsl())
  const answer = await new Promise<number>((resolve, reject) => {
    const onAnswer = (d: Buffer) => resolve(d[0] ?? 0)
    if (reads) reads.listen(onAnswer)
    else socket.once('data', onAnswer)
    socket.once('error', reject)
  })
  if (answer !== 'S'.charCodeAt(0)) {
    // Held for the login from here on.
    reads?.listen(undefined)
    if (mode === 'prefer') return socket
    socket.destroy()
    throw new Error('the upstream server does not support TLS')
  }
  // Bytes sent in the clear before the handshake could come from anyone on the path: dropped.
  reads?.listen(() => {})
  const verify = mode === 'verify-ca' || mode === 'verify-full'
  const secure = tlsConnect({
    socket,
    // The name checked against the certificate (verify-full); SNI carries host names only.
    host: config.host,
    ...(isIP(config.host) === 0 ? { servername: config.host } : {}),
    rejectUnauthorized: verify,
    ca: config.sslrootcert ?? undefined,
    // verify-ca checks the chain but not the host name, as libpq does.
    ...(mode === 'verify-full' ? {} : { checkServerIdentity: () => undefined }),
  })
  signal?.addEventListener('abort', () => secure.destroy(timedOut()), { once: true })
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve)
    secure.once('error', reject)
  })
  secure.setNoDelay(true)
  // TLS reads the raw socket itself; what it decrypts arrives as `data`, held for the login.
  if (reads) {
    reads.listen(undefined)
    secure.on('data', (chunk: Buffer) => reads.deliver(chunk))
  }
  return secure
}

/**
 * Connects and authenticates (trust, cleartext, MD5 or SCRAM-SHA-256) as the datasource's user.
 * The session runs read-only, with an empty search path and the datasource's statement timeout
 * by default, set in the startup packet so that `RESET` falls back to them too.
 */
export async function connectPostgres(config: PostgresUpstreamConfig): Promise<PostgresBackend> {
  // Every attempt ends within the connect timeout: a hung server or network is a clean failure.
  const deadline = new AbortController()
  const timer = setTimeout(
    () => deadline.abort(),
    config.connectTimeoutMs ?? DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS,
  )
  try {
    return await startSession(config, deadline.signal)
  } finally {
    clearTimeout(timer)
  }
}

function timedOut(): Error {
  return Object.assign(new Error('upstream connect timeout'), { code: 'ETIMEDOUT' })
}

async function startSession(
  config: PostgresUpstreamConfig,
  signal: AbortSignal,
): Promise<PostgresBackend> {
  const reads = new SocketReads()
  const socket = await openSocket(config, signal, reads)
  const timeout = Math.max(0, Math.trunc(config.statementTimeoutMs))
  socket.write(
    serialize.startup({
      user: config.user,
      database: config.database,
      client_encoding: 'UTF8',
      application_name: 'palisade',
      // An empty search path: names in rewritten SQL resolve in pg_catalog only, so no upstream
      // function, operator or type can stand in for a built-in (relations are schema-qualified).
      // No JIT: rewritten statements (fences, the virtual catalog's sets) are estimated far above
      // what they cost to run, and PostgreSQL would spend seconds compiling them.
      options: `-c search_path= -c default_transaction_read_only=on -c jit=off -c statement_timeout=${timeout}`,
    }),
  )
  const parameters = new Map<string, string>()
  let processId = 0
  let secretKey = 0
  const password = config.password ?? ''
  let scram: ScramClient | undefined
  let checked = false
  let unsafe: string | null = null
  const frames = new FrameSplitter()
  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      cleanup()
      socket.destroy()
      reject(error)
    }
    const onMessage = (m: StartupMessage) => {
      switch (m.name) {
        case 'authenticationCleartextPassword':
          socket.write(serialize.password(password))
          break
        case 'authenticationMD5Password': {
          const inner = md5(password + config.user)
          const salt = m.salt
          socket.write(serialize.password(`md5${md5(Buffer.concat([Buffer.from(inner), salt]))}`))
          break
        }
        case 'authenticationSASL':
          scram = new ScramClient(password)
          socket.write(serialize.sendSASLInitialResponseMessage('SCRAM-SHA-256', scram.first()))
          break
        case 'authenticationSASLContinue': {
          const exchange = scram
          if (!exchange) break
          exchange.final(m.data).then(
            (text) => socket.write(serialize.sendSCRAMClientFinalMessage(text)),
            (error: unknown) => fail(error instanceof Error ? error : new Error(String(error))),
          )
          break
        }
        case 'authenticationSASLFinal':
          scram?.verify(m.data)
          break
        case 'parameterStatus':
          parameters.set(m.parameterName, m.parameterValue)
          break
        case 'backendKeyData':
          processId = m.processId
          secretKey = m.secretKey
          break
        case 'error':
          fail(new Error(`upstream refused the connection: ${m.message}`))
          break
        case 'dataRow':
          unsafe = m.fields[0] ?? null
          break
        case 'readyForQuery':
          // Authenticated: check the casts before the session is handed out (unsafe-casts.ts).
          if (!checked) {
            checked = true
            socket.write(serialize.query(UNSAFE_CASTS_QUERY))
            break
          }
          if (unsafe !== null) {
            fail(new UnsafeUpstreamError(unsafe))
            break
          }
          cleanup()
          resolve()
          break
      }
    }
    const onData = (chunk: Buffer) => {
      try {
        for (const frame of frames.push(chunk)) onMessage(decodeStartupMessage(frame))
      } catch (error) {
        fail(error as Error)
      }
    }
    const onClose = () => fail(new Error('upstream closed the connection during startup'))
    const cleanup = () => {
      reads.listen(undefined)
      socket.off('error', fail)
      socket.off('close', onClose)
    }
    reads.listen(onData)
    socket.on('error', fail)
    socket.on('close', onClose)
    signal.addEventListener('abort', () => fail(timedOut()), { once: true })
  })
  return { socket, reads, parameters, processId, secretKey }
}

/** Sends a CancelRequest for a backend on a fresh connection, as libpq does. */
export async function sendCancel(
  config: PostgresUpstreamConfig,
  processId: number,
  secretKey: number,
): Promise<void> {
  const socket = netConnect({ host: config.host, port: config.port })
  await new Promise<void>((resolve) => {
    socket.once('connect', () => {
      socket.end(serialize.cancel(processId, secretKey))
    })
    socket.once('close', () => resolve())
    socket.once('error', () => resolve())
  })
}

function md5(data: string | Buffer): string {
  return createHash('md5').update(data).digest('hex')
}
