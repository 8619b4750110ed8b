import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type * as schema from './schema/index.js'

/** The drizzle database both drivers produce, typed with the one pg-core schema. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>

/** A transaction handle; it is also a `Db`, so services take either. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** What the store needs from a driver. */
export interface StoreDriver {
  readonly kind: 'pglite' | 'postgres'
  readonly db: Db
  /** Applies the committed migrations; on PostgreSQL under an advisory lock. */
  migrate(migrationsFolder: string): Promise<void>
  /**
   * Listens on a channel (PostgreSQL only). `onReconnect` runs after the listener came back from
   * a lost connection, when notifications may have been missed.
   */
  listen?(
    channel: string,
    onMessage: (payload: string) => void,
    onReconnect: () => void,
  ): Promise<void>
  /** @internal PGlite only: a snapshot of the data directory (test fixtures). */
  dump?(): Promise<Blob>
  close(): Promise<void>
}

/** Rows of a raw `db.execute` on either driver. */
export async function rowsOf<T>(result: Promise<unknown>): Promise<T[]> {
  return ((await result) as { rows: T[] }).rows
}

/** The SQLSTATE of a driver error, looking through drizzle's wrapping. */
export function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error
  for (let i = 0; i < 5 && current; i++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Runs a write and turns a unique violation (23505) into the given error. */
export async function onUniqueViolation<T>(
  write: () => Promise<T>,
  toError: () => Error,
): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (sqlStateOf(error) === '23505') throw toError()
    throw error
  }
}
