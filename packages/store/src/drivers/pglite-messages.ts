import type { AuditBatch } from '../audit/audit-batch.js'

/** What the embedded store's thread and its client say to each other (pglite-thread.ts). */

/** How a query's rows come back: drizzle asks for some types as their text (no parsing). */
export interface WireQueryOptions {
  rowMode?: 'array' | 'object'
  /** Type OIDs whose values stay text, as drizzle's identity parsers ask. */
  textTypes?: number[]
}

/** A request; `tx` runs it inside that open transaction. */
export type PgliteRequest =
  | {
      id: number
      op: 'query'
      sql: string
      params: unknown[]
      options: WireQueryOptions
      tx?: number
    }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  /** Opens a transaction; answered with its number once PGlite has begun it. */
  | { id: number; op: 'begin' }
  /** Ends a transaction: commits, or rolls back. */
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'dump' }
  /** Opens the query-audit writing stream of this process (audit-ingest.ts). */
  | { id: number; op: 'audit-open'; key: Uint8Array | null; chainId: string | null }
  /** Stores one query-audit batch in that stream. */
  | { id: number; op: 'audit'; batch: AuditBatch }
  | { id: number; op: 'close' }

/** An error as data: its message, name and the PostgreSQL fields (code, constraint, …). */
export interface WireError {
  message: string
  name: string
  fields: Record<string, string | number | boolean | null>
}

export type PgliteResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  /** Sent once: PGlite is open (or could not be opened). */
  | { id: 0; ready: true }
  | { id: 0; ready: false; error: WireError }

/** What the thread opens PGlite with. */
export interface PgliteThreadOptions {
  dataDir?: string | undefined
  /** A `dumpDataDir()` snapshot to start from, as bytes. */
  load?: { bytes: Uint8Array; type: string } | undefined
  postgresqlconf: string[]
}

/** An error as data, keeping the fields the store reads (`code`, `constraint`, …). */
export function toWireError(error: unknown): WireError {
  const fields: WireError['fields'] = {}
  if (error && typeof error === 'object') {
    for (const [key, value] of Object.entries(error)) {
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
        fields[key] = value as string | number | boolean | null
      }
    }
  }
  return {
    message: error instanceof Error ? error.message : String(error),
    name: error instanceof Error ? error.name : 'Error',
    fields,
  }
}

/** The error again, on the calling thread. */
export function fromWireError(wire: WireError): Error {
  const error = new Error(wire.message)
  Object.assign(error, wire.fields)
  error.name = wire.name
  return error
}
