import { drizzle } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import type { Db, StoreDriver } from '../db.js'
import * as schema from '../schema/index.js'

/** Advisory lock key that serializes migrations of instances sharing one database. */
const MIGRATION_LOCK_KEY = 0x5a11_5ade

/** Options for the PostgreSQL driver. */
export interface PostgresDriverOptions {
  databaseUrl: string
  /** Pool size for store queries (default 10). */
  max?: number | undefined
}

/** Opens PostgreSQL through node-postgres with a pool plus one dedicated LISTEN connection. */
export async function openPostgresDriver(options: PostgresDriverOptions): Promise<StoreDriver> {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.max ?? 10 })
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = drizzle(pool, { schema }) as unknown as Db
  let listener: pg.Client | undefined
  let closed = false
  let retry: NodeJS.Timeout | undefined

  return {
    kind: 'postgres',
    db,
    async migrate(migrationsFolder) {
      const client = await pool.connect()
      try {
        // Two instances starting together: the second waits, then finds nothing left to apply.
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
        try {
          await migrate(drizzle(client, { schema }), { migrationsFolder })
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
        }
      } finally {
        client.release()
      }
    },
    async listen(channel, onMessage, onReconnect) {
      const connect = async (isReconnect: boolean): Promise<void> => {
        if (closed) return
        const client = new pg.Client({
          connectionString: options.databaseUrl,
          application_name: 'palisade-change-listener',
        })
        const scheduleReconnect = () => {
          if (closed || listener !== client) return
          listener = undefined
          client.end().catch(() => {})
          retry = setTimeout(() => {
            connect(true).catch(() => scheduleReconnect())
          }, 500)
          retry.unref()
        }
        client.on('error', scheduleReconnect)
        client.on('end', scheduleReconnect)
        client.on('notification', (msg) => {
          if (msg.channel === channel && msg.payload !== undefined) onMessage(msg.payload)
        })
        listener = client
        try {
          await client.connect()
          await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
        } catch (error) {
          if (!isReconnect) {
            listener = undefined
            await client.end().catch(() => {})
            throw error
          }
          scheduleReconnect()
          return
        }
        if (isReconnect) onReconnect()
      }
      await connect(false)
    },
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      const l = listener
      listener = undefined
      if (l) await l.end().catch(() => {})
      await pool.end()
    },
  }
}
