import type { Socket } from 'node:net'
import type { DatasourceConnection } from '@palisade/store'
import pg from 'pg'
import { openSocket } from './postgres-connect.js'
import type { PgliteUpstreamConfig, PostgresUpstreamConfig } from './upstream.types.js'
import { upstreamConfigOf } from './upstream-config.js'

/** How long the admin plane waits for an upstream (docs/admin-api.md#catalog-discovery: 30 s connect, 60 s statement). */
export interface UpstreamTimeouts {
  connectMs: number
  statementMs: number
}

/** Discovery's timeouts (docs/admin-api.md#catalog-discovery). */
export const DISCOVERY_TIMEOUTS: UpstreamTimeouts = { connectMs: 30_000, statementMs: 60_000 }

/** One short-lived upstream connection of the admin plane, for catalog reads. */
export interface UpstreamReader {
  query<T>(text: string, params?: unknown[]): Promise<T[]>
  /**
   * Runs one statement and returns its columns and rows as arrays of PostgreSQL's text output
   * (as psql shows them; columns with the same name are all kept).
   */
  textRows(text: string): Promise<TextRows>
  /** Closes the connection; also interrupts a PostgreSQL read in progress. Safe to call twice. */
  close(): Promise<void>
}

/** A result as text: what a preview shows (docs/preview-and-simulation.md). */
export interface TextRows {
  columns: { name: string; type_oid: number }[]
  rows: (string | null)[][]
}

/** node-postgres without type parsing: every value stays PostgreSQL's text. */
const TEXT_TYPES = { getTypeParser: () => (value: string) => value }

/**
 * node-postgres on a socket `openSocket` opened (TCP, and TLS as `sslmode` says), so the admin
 * plane and the data plane reach an upstream the same way. pg's own connect becomes a no-op.
 */
function onOpenedSocket(socket: Socket): Socket {
  socket.connect = (() => {
    queueMicrotask(() => socket.emit('connect'))
    return socket
  }) as Socket['connect']
  return socket
}

/** Opens and authenticates one node-postgres client; `signal` closes it. */
async function connectClient(
  config: PostgresUpstreamConfig,
  timeouts: UpstreamTimeouts,
  signal: AbortSignal | undefined,
): Promise<{ client: pg.Client; close: () => Promise<void> }> {
  // The connect timeout bounds the connect only: a long catalog read must outlive it.
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeouts.connectMs)
  let socket: Socket
  try {
    socket = await openSocket(
      config,
      signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal,
    )
  } finally {
    clearTimeout(timer)
  }
  const client = new pg.Client({
    stream: () => onOpenedSocket(socket),
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.user,
    password: config.password ?? undefined,
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    application_name: 'palisade-admin',
  })
  // A connection lost while idle is reported by the next query; don't crash on the event.
  client.on('error', () => undefined)
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await client.end().catch(() => undefined)
    socket.destroy()
  }
  // Cancelling ends the connection, which also interrupts a connect or read in progress.
  signal?.addEventListener('abort', () => void close(), { once: true })
  if (signal?.aborted) await close()
  try {
    await client.connect()
  } catch (error) {
    await close()
    throw error
  }
  return { client, close }
}

async function openPostgres(
  config: PostgresUpstreamConfig,
  timeouts: UpstreamTimeouts,
  signal: AbortSignal | undefined,
): Promise<UpstreamReader> {
  const { client, close } = await connectClient(config, timeouts, signal)
  await client.query('SET default_transaction_read_only = on')
  return {
    async query<T>(text: string, params: unknown[] = []) {
      return (await client.query(text, params)).rows as T[]
    },
    async textRows(text: string) {
      const result = await client.query({ text, rowMode: 'array', types: TEXT_TYPES })
      return {
        columns: result.fields.map((f) => ({ name: f.name, type_oid: f.dataTypeID })),
        rows: result.rows as (string | null)[][],
      }
    },
    close,
  }
}

/**
 * A `pglite` datasource opened from its config, as `/datasources/{id}/test` does. An in-memory
 * database is created empty, so its `init_sql` runs first (docs/resources.md#datasources).
 */
async function openPglite(
  config: PgliteUpstreamConfig,
  signal: AbortSignal | undefined,
): Promise<UpstreamReader> {
  const { PGlite } = await import('@electric-sql/pglite')
  const dataDir = config.dataDir ?? undefined
  const db = await PGlite.create(dataDir)
  let textParsers: Record<number, (value: string) => string> | undefined
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await db.close().catch(() => undefined)
  }
  // PGlite runs a statement to completion; cancelling closes it as soon as that returns.
  signal?.addEventListener('abort', () => void close(), { once: true })
  if (signal?.aborted) await close()
  try {
    const initSql = config.initSql
    if (dataDir === undefined && initSql) await db.exec(initSql)
  } catch (error) {
    await close()
    throw error
  }
  return {
    async query<T>(text: string, params: unknown[] = []) {
      return (await db.query<T>(text, params)).rows
    },
    async textRows(text: string) {
      // PGlite parses every type it knows; a parser per type that keeps the text undoes that.
      textParsers ??= Object.fromEntries(
        (await db.query<{ oid: number }>('SELECT oid::int AS oid FROM pg_type')).rows.map((r) => [
          r.oid,
          (value: string) => value,
        ]),
      )
      const result = await db.query<(string | null)[]>(text, [], {
        rowMode: 'array',
        parsers: textParsers,
      })
      return {
        columns: result.fields.map((f) => ({ name: f.name, type_oid: f.dataTypeID })),
        rows: result.rows,
      }
    },
    close,
  }
}

/**
 * Opens one read connection to a datasource's upstream with its stored config. Aborting
 * `signal` closes it. Rejects with the driver's error when the upstream cannot be reached.
 */
export function openUpstreamReader(
  conn: DatasourceConnection,
  timeouts: UpstreamTimeouts,
  signal?: AbortSignal,
): Promise<UpstreamReader> {
  const config = upstreamConfigOf(conn)
  return config.kind === 'pglite'
    ? openPglite(config, signal)
    : openPostgres(config, timeouts, signal)
}
