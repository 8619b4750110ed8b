import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type { AuditSink } from '../audit/query-audit-writer.js'
import type { ListenOptions } from '../drivers/postgres-listener.js'
import type * as schema from '../tables.js'

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
   * Listens on a channel on a dedicated connection that reconnects by itself (PostgreSQL only);
   * throws when the first connection fails.
   */
  listen?(options: ListenOptions): Promise<void>
  /** Whether the listener connection is up and subscribed. */
  readonly listening?: boolean
  /** Sends a NOTIFY on the listened channel through the listener connection (best effort). */
  notify?(payload: string): void
  /**
   * Where query-audit batches are hashed, encoded and stored: the embedded store's own thread, or
   * the PostgreSQL store's audit thread. `key` seals batches into the writing stream `chainId`.
   */
  auditSink(key: Buffer | undefined, chainId: string): Promise<AuditSink>
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

/** The constraint a PostgreSQL error names (23505 and friends), looked up through causes. */
export function constraintOf(error: unknown): string | undefined {
  let current: unknown = error
  for (let i = 0; i < 5 && current; i++) {
    const constraint = (current as { constraint?: unknown }).constraint
    if (typeof constraint === 'string') return constraint
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Node socket errors that mean the store's host cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
])

/**
 * Whether an error says the store cannot be reached right now rather than that a request was
 * wrong: refused, reset or timed-out connections, a server shutting down or starting up
 * (`57P01`-`57P03`), out of connections (`53300`) or any connection exception (class `08`).
 */
export function isStoreUnreachable(error: unknown): boolean {
  let current: unknown = error
  for (let i = 0; i < 5 && current; i++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') {
      if (UNREACHABLE.has(code) || code.startsWith('08') || /^57P0[1-3]$|^53300$/.test(code)) {
        return true
      }
    }
    const message = current instanceof Error ? current.message : ''
    if (/^Connection terminated|timeout exceeded when trying to connect/.test(message)) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
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
