import type { DatasourceConnection } from '@palisade/store'
import { openUpstreamReader } from './upstream-reader.js'

/** Result of `POST /datasources/{id}/test` (docs/resources.md#datasources). */
export type ProbeResult =
  | { success: true; server_version: string }
  | { success: false; message: string }

const CONNECT_TIMEOUT_MS = 10_000

async function probePostgres(conn: DatasourceConnection): Promise<ProbeResult> {
  const timeouts = { connectMs: CONNECT_TIMEOUT_MS, statementMs: CONNECT_TIMEOUT_MS }
  const reader = await openUpstreamReader(conn, timeouts)
  try {
    const [row] = await reader.query<{ server_version: string }>('SHOW server_version')
    return { success: true, server_version: row?.server_version ?? 'unknown' }
  } finally {
    await reader.close()
  }
}

async function probePglite(dataDir: string | null): Promise<ProbeResult> {
  const { PGlite } = await import('@electric-sql/pglite')
  const db = await PGlite.create(dataDir ?? undefined)
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
      ? await probePglite(conn.config.data_dir)
      : await probePostgres(conn)
  } catch (error) {
    return { success: false, message: error instanceof Error ? error.message : String(error) }
  }
}
