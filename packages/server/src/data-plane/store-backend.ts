import { isStoreError, isStoreUnreachable, type Store } from '@palisade/store'
import { type TokenLoginOptions, TokenLogins } from '../sso/token-logins.js'
import type { UpstreamConfig } from '../upstream/upstream.types.js'
import { upstreamConfigOf } from '../upstream/upstream-config.js'
import { WireError } from '../wire/wire-error.js'
import type {
  AuditRow,
  CleartextCheck,
  DataPlaneBackend,
  ScramCredentials,
  SessionChange,
} from './backend.js'
import { SessionInputCache } from './session-input-cache.js'
import { SharedStatementGate } from './shared-statement-gate.js'

/** A data-plane login updates `last_login_at` at most this often per user. */
const LOGIN_RECORD_INTERVAL_MS = 5000

/** The data-plane backend over `@palisade/store`; `sso` tunes token verification (docs/sso.md). */
export function createStoreBackend(store: Store, sso: TokenLoginOptions = {}): DataPlaneBackend {
  const tokens = new TokenLogins(store, sso)
  // Only the embedded store keeps session inputs between logins: it lives in this process, so
  // every change is heard the moment it commits (other instances' changes reach a PostgreSQL
  // store's listeners later).
  const kept = store.kind === 'pglite' ? new SessionInputCache() : undefined
  if (kept) store.changes.subscribe(() => kept.clear())
  // A changed catalog is read again at once, off this thread, not at the next login.
  store.changes.subscribe((change) => {
    const id = change.type === 'ds' || change.type === 'ds_users' ? change.datasourceId : undefined
    if (change.type === 'user') return
    // Best effort: a failed read is simply done again at the next login.
    Promise.resolve()
      .then(() => store.sessions.warm(id))
      .catch(() => {})
  })
  const loginsRecorded = new Map<string, number>()
  // Only a PostgreSQL store is shared by several instances; the embedded one counts in process.
  const gate =
    store.kind === 'postgres' ? new SharedStatementGate(store.statementCounters) : undefined
  return {
    statementGate: () => gate,
    async scramCredentials(username): Promise<ScramCredentials> {
      const info = await reachStore(() => store.getUserForAuth(username))
      return {
        salt: info.salt,
        iterations: info.iterations,
        storedKey: info.storedKey,
        serverKey: info.serverKey,
        exists: info.exists,
        refusal: info.refusal,
      }
    },
    async buildSession(username, datasourceName) {
      const read = () => store.buildSessionInput(username, datasourceName)
      try {
        return await (kept ? kept.get(username, datasourceName, read) : read())
      } catch (error) {
        if (isDenied(error)) return null
        throw unavailable(error) ?? error
      }
    },
    async rebuildSession(userId, datasourceId) {
      try {
        return await store.sessions.rebuildSessionInput(userId, datasourceId)
      } catch (error) {
        if (isDenied(error)) return null
        throw error
      }
    },
    async upstreamConfig(datasourceId): Promise<UpstreamConfig> {
      const ds = await reachStore(() => store.datasources.getConnection(datasourceId))
      return upstreamConfigOf(ds)
    },
    audit(row: AuditRow) {
      store.audit.queries.write(row)
    },
    auditBacklog() {
      return store.audit.queries.writer.backlog()
    },
    onChange(listener: (change: SessionChange) => void) {
      return store.changes.subscribe((notice) => listener(notice))
    },
    auditLogin(record) {
      store.logins.record(record)
    },
    tokenLoginsAvailable: () => tokens.available(),
    async checkCleartext(username, password): Promise<CleartextCheck> {
      if (tokens.isToken(password)) return reachStore(() => tokens.login(username, password))
      const check = await reachStore(() => store.users.checkPassword(username, password))
      return check.user
        ? { userId: check.user.id, expiresAt: null, refusal: null }
        : { userId: null, expiresAt: null, refusal: check.reason }
    },
    recordLogin(userId) {
      // One UPDATE per connection would make every login a write: once per user every 5 s.
      const now = Date.now()
      if (now - (loginsRecorded.get(userId) ?? 0) < LOGIN_RECORD_INTERVAL_MS) return
      if (loginsRecorded.size >= 10_000) loginsRecorded.clear()
      loginsRecorded.set(userId, now)
      store.users.recordLogin(userId).catch(() => {})
    },
  }
}

/** Session denials (unknown/inactive user or datasource, no access) and vanished rows. */
function isDenied(error: unknown): boolean {
  return isStoreError(error) && error.code === 'not_found'
}

/** PostgreSQL's `cannot_connect_now`: clients and poolers treat it as "retry later". */
const CANNOT_CONNECT_NOW = '57P03'

/** Runs a store read of the connect path, turning an unreachable store into a clear FATAL. */
async function reachStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    throw unavailable(error) ?? error
  }
}

/** FATAL 57P03 when the store cannot be reached (see `isStoreUnreachable`), else undefined. */
function unavailable(error: unknown): WireError | undefined {
  if (!isStoreUnreachable(error)) return undefined
  return new WireError({
    severity: 'FATAL',
    code: CANNOT_CONNECT_NOW,
    message: 'the policy store is unavailable',
    hint: 'Retry once Palisade can reach its store again.',
  })
}
