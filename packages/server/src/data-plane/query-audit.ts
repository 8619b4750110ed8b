import { isPalisadeError, type ShadowOutcome, type StatementTextTemplate } from '@palisade/core'
import type { DataPlaneObserver } from '../metrics/server-metrics.js'
import { WireError } from '../wire/wire-error.js'
import type { AuditRow, DataPlaneBackend } from './backend.js'
import type { LiveSession } from './live-session.js'

/** What one statement did, for its audit row. */
export interface StatementOutcome {
  originalSql: string
  rewrittenSql: string | null
  policiesApplied: readonly unknown[]
  /** Milliseconds from receipt to the end of the result; null for denied statements. */
  elapsedMs: number | null
  status: AuditRow['status']
  errorMessage: string | null
  /** What the session's shadow policies would have done (absent without any). */
  shadow?: ShadowOutcome | undefined
  /** Both texts as a rewrite template and its literals, when they were filled from one. */
  template?: StatementTextTemplate | undefined
}

/** `client_info` keeps the first 256 characters of `application_name` (docs/pgwire.md#connecting). */
const CLIENT_INFO_MAX = 256

/** Writes query-audit rows for one connection (docs/audit.md#query-audit), off the query's path. */
export class QueryAudit {
  readonly #backend: DataPlaneBackend
  readonly #session: LiveSession
  readonly #observer: DataPlaneObserver | undefined
  /** The connection's current `application_name` (startup value or latest SET). */
  clientInfo: string

  constructor(
    backend: DataPlaneBackend,
    session: LiveSession,
    clientInfo: string,
    observer?: DataPlaneObserver,
  ) {
    this.#backend = backend
    this.#session = session
    this.clientInfo = clientInfo
    this.#observer = observer
  }

  /** Queues the row of one statement. */
  record(outcome: StatementOutcome): void {
    const s = this.#session
    this.#backend.audit({
      user_id: s.userId,
      username: s.username,
      data_source_id: s.datasourceId,
      datasource_name: s.datasourceName,
      original_query: outcome.originalSql,
      rewritten_query: outcome.rewrittenSql,
      policies_applied: outcome.policiesApplied,
      execution_time_ms: outcome.elapsedMs === null ? null : Math.round(outcome.elapsedMs),
      client_info: this.clientInfo === '' ? null : this.clientInfo.slice(0, CLIENT_INFO_MAX),
      status: outcome.status,
      error_message: outcome.errorMessage,
      ...(outcome.shadow
        ? { shadow_policies: outcome.shadow.policies, shadow_denied: outcome.shadow.wouldDeny }
        : {}),
      ...(outcome.template ? { template: outcome.template } : {}),
    })
    this.#observer?.statement(s.datasourceName, outcome.status, outcome.elapsedMs)
  }

  /** Queues the row of a statement the proxy rejected before it ran upstream. */
  rejected(originalSql: string, error: unknown, elapsedMs: number): void {
    const status = isPalisadeError(error) ? error.auditStatus : 'error'
    this.record({
      originalSql,
      rewrittenSql: null,
      policiesApplied: [],
      // Denied rows carry no execution time (docs/audit.md#query-audit).
      elapsedMs: status === 'denied' ? null : elapsedMs,
      status,
      errorMessage: auditMessage(error),
    })
  }
}

/** The audit `error_message` of an error: the cause, never the policy's name. */
export function auditMessage(error: unknown): string {
  if (isPalisadeError(error)) return error.auditMessage
  if (error instanceof WireError) return error.fields.message
  return 'internal error'
}
