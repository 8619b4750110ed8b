import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import type { Db, StoreDriver } from '../kernel/db.js'
import * as schema from '../tables.js'
import { PgliteClient } from './pglite-client.js'

/** Options for the embedded driver. */
export interface PgliteDriverOptions {
  /** A data directory; omitted means in-memory. */
  dataDir?: string | undefined
  /** A `dumpDataDir()` snapshot to start from (tests). */
  loadDataDir?: Blob | File | undefined
}

/** PGlite on its own thread (pglite-thread.ts), so its work never holds up serving clients. */
async function startPglite(options: PgliteDriverOptions): Promise<PgliteClient> {
  const load = options.loadDataDir
  const client = new PgliteClient({
    // PGlite touches its whole buffer cache at start-up: 128 MB (the default) would be most of
    // the server's memory. The store's working set (policies, users, recent audit pages) fits
    // in far less; older audit pages come from the operating system's file cache.
    postgresqlconf: ['shared_buffers=16MB'],
    dataDir: options.dataDir,
    load: load ? { bytes: new Uint8Array(await load.arrayBuffer()), type: load.type } : undefined,
  })
  await client.waitReady
  return client
}

/** Runs PGlite once in a child process to create the cluster in `dataDir`; false if it failed. */
function createClusterInChild(dataDir: string): Promise<boolean> {
  const script = [
    'const { PGlite } = await import(process.env.PALISADE_PGLITE_URL)',
    "const db = new PGlite({ dataDir: process.env.PALISADE_PGLITE_DIR, postgresqlconf: ['shared_buffers=16MB'] })",
    'await db.waitReady',
    'await db.close()',
  ].join('\n')
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: 'ignore',
      env: {
        ...process.env,
        PALISADE_PGLITE_URL: import.meta.resolve('@electric-sql/pglite'),
        PALISADE_PGLITE_DIR: dataDir,
      },
    })
    child.once('error', () => resolve(false))
    child.once('exit', (code) => resolve(code === 0 && existsSync(join(dataDir, 'PG_VERSION'))))
  })
}

/** Opens embedded PGlite. It is single-writer: transactions are serialized by PGlite itself. */
export async function openPgliteDriver(options: PgliteDriverOptions = {}): Promise<StoreDriver> {
  const { dataDir } = options
  if (dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) {
    // Creating a cluster grows PGlite's memory by a few hundred MB that it never gives back,
    // not even once closed: create it in a short-lived process, then serve from an instance
    // that only opens it. Where no child process can run, a first instance here does it.
    if (!(await createClusterInChild(dataDir))) await (await startPglite(options)).close()
  }
  const client = await startPglite(options)
  // Drizzle's PGlite session calls only what PgliteClient has (query, transaction, exec).
  const pglite = client as unknown as PGlite
  const db = drizzle(pglite, { schema }) as unknown as Db
  return {
    kind: 'pglite',
    db,
    async migrate(migrationsFolder) {
      await migrate(drizzle(pglite, { schema }), { migrationsFolder })
    },
    auditSink: (key, chainId) => client.auditSink(key, chainId),
    async dump() {
      return client.dumpDataDir()
    },
    async close() {
      if (!client.closed) await client.close()
    },
  }
}
