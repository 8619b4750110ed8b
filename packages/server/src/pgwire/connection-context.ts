import type { RewritePool } from '@palisade/core'
import type { LiveSession } from '../data-plane/live-session.js'
import type { QueryAudit } from '../data-plane/query-audit.js'
import type { StatementGate } from '../data-plane/statement-gate.js'
import type { DataPlaneObserver } from '../metrics/server-metrics.js'
import type { CursorRegistry } from './cursor-registry.js'
import type { RowCap } from './row-cap.js'
import type { UpstreamRelay } from './upstream-relay.js'

/** Rewrites a statement: at once, or (a long one, in a worker) as a promise. */
export type Rewriter = Pick<RewritePool, 'rewrite'>

/** What the statement handlers of one authenticated connection share. */
export interface ConnectionContext {
  /** Unique per process; prefixes upstream statement names. */
  readonly id: number
  readonly live: LiveSession
  readonly relay: UpstreamRelay
  readonly audit: QueryAudit
  /** Rewrites statements; long ones in a worker thread (a promise is returned then). */
  readonly rewriter: Rewriter
  /** The access rules each cursor was opened under. */
  readonly cursors: CursorRegistry
  /** `application_name` from the startup packet (what RESET returns to). */
  readonly startupApplicationName: string
  /** Whether a statement's literal parameters are used upstream (docs/rewrite.md). */
  readonly literalParameters: boolean
  /** Rate and concurrency limits of users that have them (docs/roles-and-access.md#limits). */
  readonly gate: StatementGate
  /** The row count of each open cursor, for a row limit across its FETCHes. */
  readonly rowCaps: Map<string, RowCap>
  /** Metrics (absent: none kept). */
  readonly observer?: DataPlaneObserver | undefined
}

/** Quotes a string literal for SQL the proxy writes itself. */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}
