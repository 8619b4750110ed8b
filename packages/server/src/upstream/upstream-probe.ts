import type { DatasourceConnection } from '@palisade/store'
import pg from 'pg'
import { postgresClientConfig } from './upstream-reader.js'

/** Result of `POST /datasources/{id}/test` (admin-api 6.3). */
export type ProbeResult =
  | { success: true; server_version: string }
  | { success: false; message: string }

const CONNECT_TIMEOUT_MS = 10_000

async function probePostgres(config: Record<string, unknown>): Promise<ProbeResult> {
  const timeouts = { connectMs: CONNECT_TIMEOUT_MS, statementMs: CONNECT_TIMEOUT_MS }
  const client = new pg.Client(postgresClientConfig(config, timeouts))
  try {
    await client.connect()
    const result = await client.query<{ server_version: string }>('SHOW server_version')
    return { success: true, server_version: result.rows[0]?.server_version ?? 'unknown' }
  } finally {
    await client.end().catch(() => undefined)
  }
}

async function probePglite(config: Record<string, unknown>): Promise<ProbeResult> {
  const { PGlite } = await import('@electric-sql/pglite')
  const dataDir = typeof config['data_dir'] === 'string' ? config['data_dir'] : undefined
  const db = await PGlite.create(dataDir)
  try {
    const result = await db.query<{ server_version: string }>('SHOW server_version')
    return { success: true, server_version: result.rows[0]?.server_version ?? 'unknown' }
  } finally {
    await db.close()
  }
}

/**
 * Opens one upstream connection with the stored config and asks for the server version. Any
 * failure becomes `{success: false}` with the driver's message: this route reports, never throws.
 */
export async function probeUpstream(conn: DatasourceConnection): Promise<ProbeResult> {
  try {
    return conn.ds_type === 'pglite'
      ? await probePglite(conn.config)
      : await probePostgres(conn.config)
  } catch (error) {
    return { success: false, message: error instanceof Error ? error.message : String(error) }
  }
}
