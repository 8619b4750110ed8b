import type { SessionInput } from '@palisade/core'
import type { ChangeEvent, LoginAuditRecord, QueryAuditRecord } from '@palisade/store'
import type { FailureReason } from '../logins/login-guard.js'
import type { UpstreamConfig } from '../upstream/upstream.types.js'
import type { StatementGate } from './statement-gate.js'

/** The stored parts of a SCRAM-SHA-256 verifier, base64 encoded. */
export interface ScramCredentials {
  salt: string
  iterations: number
  storedKey: string
  serverKey: string
  /** False for an unknown or inactive user: a deterministic fake that no password matches. */
  exists: boolean
  /** Why no password matches, for the login audit only: `unknown_user` or `inactive_user`. */
  refusal?: 'unknown_user' | 'inactive_user' | null
}

/** A cleartext password check (token logins on): the user, or why it failed (login audit only). */
export type CleartextCheck =
  | { userId: string; expiresAt: number | null; refusal: null }
  | { userId: null; expiresAt: null; refusal: FailureReason }

/** Which live sessions a committed change affects (docs/roles-and-access.md#changes-apply-live). */
export type SessionChange = ChangeEvent

/** One query-audit row (docs/audit.md#query-audit), as the store's writer takes it. */
export type AuditRow = QueryAuditRecord

/**
 * Everything the data plane needs from the resource store, behind one small interface so the
 * protocol code is testable and the store API can move without touching it.
 */
export interface DataPlaneBackend {
  /** The SCRAM verifier of a user; a deterministic fake for unknown or inactive users. */
  scramCredentials(username: string): Promise<ScramCredentials>
  /**
   * The session input of a user on a datasource by name; null when the datasource is unknown or
   * inactive, the user cannot log in, or no access scope matches (all answered alike).
   */
  buildSession(username: string, datasourceName: string): Promise<SessionInput | null>
  /** The same by ids, for rebuilding a live session; null when the context must be removed. */
  rebuildSession(userId: string, datasourceId: string): Promise<SessionInput | null>
  /** How to reach the datasource's upstream. */
  upstreamConfig(datasourceId: string): Promise<UpstreamConfig>
  /** Queues one query-audit row; never blocks the query. */
  audit(row: AuditRow): void
  /**
   * While the audit store answers but falls behind: a promise the connection awaits before a
   * client's next statement (undefined when nothing is behind).
   */
  auditBacklog?(): Promise<void> | undefined
  /** Subscribes to committed changes; returns the unsubscribe function. */
  onChange(listener: (change: SessionChange) => void): () => void
  /** Records a successful data-plane login (best effort). */
  recordLogin?(userId: string): void
  /** Queues a login-audit event (a failed or throttled login); never blocks. */
  auditLogin?(record: LoginAuditRecord): void
  /** Whether token logins can succeed now (an identity provider is active; docs/sso.md). */
  tokenLoginsAvailable?(): Promise<boolean>
  /**
   * Checks a password sent in clear (only asked for where token logins are on): an identity
   * provider's token, verified and signed in with its claims (`expiresAt` set), or a password
   * checked against the user's SCRAM verifier (`expiresAt` null).
   */
  checkCleartext?(username: string, password: string): Promise<CleartextCheck>
  /**
   * Where rate and concurrency limits are counted when several instances share the store
   * (docs/roles-and-access.md#limits); absent: in this process.
   */
  statementGate?(): StatementGate | undefined
}
