import { drizzle } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import type { Db, StoreDriver } from '../kernel/db.js'
import * as schema from '../tables.js'
import { PostgresAuditClient } from './postgres-audit-client.js'
import { PostgresListener } from './postgres-listener.js'

/** Advisory lock key that serializes migrations of instances sharing one database. */
const MIGRATION_LOCK_KEY = 0x5a11_5ade

/** How long opening a pooled connection may take. */
const CONNECT_TIMEOUT_MS = 5_000

/** Options for the PostgreSQL driver. */
export interface PostgresDriverOptions {
  databaseUrl: string
  /** Pool size for store queries (default 10). */
  max?: number | undefined
}

/** Opens PostgreSQL through node-postgres with a pool plus one dedicated LISTEN connection. */
export async function openPostgresDriver(options: PostgresDriverOptions): Promise<StoreDriver> {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.max ?? 10,
    // An unreachable store fails requests after this long instead of the OS's TCP timeout.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  })
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  // Nor one that is checked out (a transaction, the migration): pg emits its socket's error on
  // the client as well as failing its query, and the pool listens only while it is idle.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = drizzle(pool, { schema }) as unknown as Db
  let listener: PostgresListener | undefined
  let audit: PostgresAuditClient | undefined

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
    async listen(listenOptions) {
      if (listener) throw new Error('the store is already listening')
      const next = new PostgresListener(options.databaseUrl, listenOptions)
      await next.start()
      listener = next
    },
    async auditSink(key, chainId) {
      audit = new PostgresAuditClient({
        databaseUrl: options.databaseUrl,
        key: key ? new Uint8Array(key) : null,
        chainId,
      })
      return audit
    },
    get listening() {
      return listener?.listening ?? false
    },
    notify(payload) {
      listener?.notify(payload)
    },
    async close() {
      const l = listener
      listener = undefined
      await l?.close()
      await audit?.close()
      await pool.end()
    },
  }
}
