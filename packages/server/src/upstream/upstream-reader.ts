import type { DatasourceConnection } from '@palisade/store'
import pg from 'pg'

/** How long the admin plane waits for an upstream (admin-api 7.1: 30 s connect, 60 s statement). */
export interface UpstreamTimeouts {
  connectMs: number
  statementMs: number
}

/** Discovery's timeouts (admin-api 7.1). */
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

/** A result as text: what a preview shows (admin-api 19). */
export interface TextRows {
  columns: { name: string; type_oid: number }[]
  rows: (string | null)[][]
}

/** node-postgres without type parsing: every value stays PostgreSQL's text. */
const TEXT_TYPES = { getTypeParser: () => (value: string) => value }

/** `sslmode` of admin-api 6.2 as node-postgres `ssl` options. */
function sslOption(config: Record<string, unknown>): pg.ClientConfig['ssl'] {
  const mode = config['sslmode'] ?? 'prefer'
  if (mode === 'disable' || mode === 'prefer') return false
  const ca = typeof config['sslrootcert'] === 'string' ? config['sslrootcert'] : undefined
  return mode === 'require' ? { rejectUnauthorized: false } : { rejectUnauthorized: true, ca }
}

/** node-postgres settings for a `postgres` datasource config (admin-api 6.2). */
export function postgresClientConfig(
  config: Record<string, unknown>,
  timeouts: UpstreamTimeouts,
): pg.ClientConfig {
  return {
    host: config['host'] as string,
    port: (config['port'] as number | undefined) ?? 5432,
    database: config['database'] as string,
    user: config['username'] as string,
    password: config['password'] as string | undefined,
    ssl: sslOption(config),
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    application_name: 'palisade-admin',
  }
}

async function openPostgres(
  config: Record<string, unknown>,
  timeouts: UpstreamTimeouts,
  signal: AbortSignal | undefined,
): Promise<UpstreamReader> {
  const client = new pg.Client(postgresClientConfig(config, timeouts))
  // A connection lost while idle is reported by the next query; don't crash on the event.
  client.on('error', () => undefined)
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await client.end().catch(() => undefined)
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
 * database is created empty, so its `init_sql` runs first (admin-api 6.2).
 */
async function openPglite(
  config: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<UpstreamReader> {
  const { PGlite } = await import('@electric-sql/pglite')
  const dataDir = typeof config['data_dir'] === 'string' ? config['data_dir'] : undefined
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
    const initSql = config['init_sql']
    if (dataDir === undefined && typeof initSql === 'string' && initSql !== '') {
      await db.exec(initSql)
    }
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
  return conn.ds_type === 'pglite'
    ? openPglite(conn.config, signal)
    : openPostgres(conn.config, timeouts, signal)
}
