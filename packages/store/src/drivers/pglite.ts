import { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import type { Db, StoreDriver } from '../db.js'
import * as schema from '../schema/index.js'

/** Options for the embedded driver. */
export interface PgliteDriverOptions {
  /** A data directory; omitted means in-memory. */
  dataDir?: string | undefined
  /** A `dumpDataDir()` snapshot to start from (tests). */
  loadDataDir?: Blob | File | undefined
}

/** Opens embedded PGlite. It is single-writer: transactions are serialized by PGlite itself. */
export async function openPgliteDriver(options: PgliteDriverOptions = {}): Promise<StoreDriver> {
  const client = new PGlite({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  })
  await client.waitReady
  const db = drizzle(client, { schema }) as unknown as Db
  return {
    kind: 'pglite',
    db,
    async migrate(migrationsFolder) {
      await migrate(drizzle(client, { schema }), { migrationsFolder })
    },
    async dump() {
      return client.dumpDataDir('none')
    },
    async close() {
      if (!client.closed) await client.close()
    },
  }
}
