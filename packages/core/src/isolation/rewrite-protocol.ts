import type { Catalog } from '../catalog.types.js'
import type { AuditStatus } from '../errors.js'
import type { RewriteResult } from '../rewrite.types.js'
import type { SessionInput } from '../session-context.types.js'
import type { SqlState } from '../sqlstate.js'

/** Main thread → rewrite worker: rewrite `sql` for the session known by `key`. */
export interface RewriteRequest {
  readonly id: number
  readonly key: number
  /**
   * Sent with the first request for a session, and again when the worker asks for it; without
   * its catalog, which goes by `catalogKey`, itself sent once per worker (a wide catalog is
   * costly to copy, and every session of one catalog version shares it).
   */
  readonly input?: Omit<SessionInput, 'catalog'>
  readonly catalogKey?: number
  readonly catalog?: Catalog
  readonly sql: string
}

/** A `PalisadeError` as data: what crosses the thread boundary. */
export interface SerializedRewriteError {
  readonly code: SqlState
  readonly message: string
  readonly severity: 'ERROR' | 'FATAL'
  readonly detail: string | undefined
  readonly hint: string | undefined
  readonly auditStatus: AuditStatus
  readonly auditMessage: string
}

/** Rewrite worker → main thread. `missing`: the worker no longer holds the session. */
export type RewriteResponse =
  | { readonly id: number; readonly result: RewriteResult }
  | { readonly id: number; readonly error: SerializedRewriteError }
  | { readonly id: number; readonly missing: true }
  | { readonly ready: true }
