import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { AccessRequestsService } from './access/access-requests-service.js'
import { AccessService } from './access/access-service.js'
import { GrantExpiry } from './access/grant-expiry.js'
import { AttributesService } from './attributes/attributes-service.js'
import { AuditChain, CHAIN_KEY_PURPOSE } from './audit/audit-chain.js'
import { AdminAuditLog } from './audit/audit-log.js'
import {
  type QueryAuditRemoval,
  QueryAuditRetention,
  type QueryAuditRetentionEvent,
  retentionDays,
} from './audit/audit-retention.js'
import { type AuditVerification, verifyAuditChains } from './audit/audit-verify.js'
import { AuditedActions } from './audit/audited-actions.js'
import { LoginAudit } from './audit/login-audit.js'
import {
  type ExportedQueryAuditEntry,
  exportQueryAudit,
  listQueryAudit,
  type QueryAuditFilter,
} from './audit/query-audit-reads.js'
import {
  type QueryAuditTimeline,
  type QueryAuditTimelineFilter,
  queryAuditTimeline,
} from './audit/query-audit-timeline.js'
import {
  type QueryAuditRecord,
  QueryAuditWriter,
  type QueryAuditWriterOptions,
} from './audit/query-audit-writer.js'
import { type ShadowReport, type ShadowReportFilter, shadowReport } from './audit/shadow-report.js'
import { CatalogService } from './catalog/catalog-service.js'
import { CatalogTagsService } from './catalog/catalog-tags-service.js'
import { DatasourcesService } from './datasources/datasources-service.js'
import { DecisionFunctionsService } from './decision-functions/decision-functions-service.js'
import { openPgliteDriver } from './drivers/pglite.js'
import { openPostgresDriver } from './drivers/postgres.js'
import { IdentityProvidersService } from './identity-providers/identity-providers-service.js'
import { SsoSignInsService } from './identity-providers/sso-sign-ins-service.js'
import {
  CHANGE_CHANNEL,
  ChangeFeed,
  type ChangeFeedEvent,
  type ChangeListener,
  type InstanceSignal,
  listenerApplicationName,
} from './kernel/change-feed.js'
import type { StoreContext } from './kernel/context.js'
import type { Db, StoreDriver } from './kernel/db.js'
import { runMutation, runTransaction } from './kernel/mutation.js'
import { loadSecretKey, SecretBox } from './kernel/secret-box.js'
import { StatementCounters } from './limits/statement-counters.js'
import { AssignmentsService } from './policies/assignments-service.js'
import { PoliciesService } from './policies/policies-service.js'
import { RelationshipsService } from './relationships/relationships-service.js'
import { RolesService } from './roles/roles-service.js'
import { SessionContextBuilder } from './sessions/session-context-builder.js'
import { TokensService } from './users/tokens-service.js'
import { UsersService } from './users/users-service.js'

/** How to open a store. */
export interface CreateStoreOptions {
  /**
   * PGlite data directory (omitted: in-memory, lost on close). Also where `secret.key` is
   * generated when no key is configured, with PostgreSQL too.
   */
  dataDir?: string
  /** A PostgreSQL connection string; when set, data lives there instead of PGlite. */
  databaseUrl?: string
  /** Key for sealing datasource secrets; else `PALISADE_SECRET_KEY`, else `<dataDir>/secret.key`. */
  secretKey?: string
  /** Query-audit batching and overflow tuning. */
  queryAudit?: QueryAuditWriterOptions
  /** Login-audit events that could not be written, for the operator log. */
  onLoginAuditProblem?: (message: string) => void
  /** Change-feed listener problems and recoveries (PostgreSQL), for the operator log. */
  onChangeFeed?: (event: ChangeFeedEvent) => void
  /** Whether this instance removes expired grants by itself (default true). */
  grantExpiry?: boolean
  /**
   * Days the query audit keeps its entries (a positive integer; default: for ever). Older batches
   * are removed behind a signed checkpoint, hourly and at start (docs/audit.md#retention).
   */
  queryAuditRetentionDays?: number | undefined
  /** Retention runs that removed something, and runs that failed, for the operator log. */
  onQueryAuditRetention?: ((event: QueryAuditRetentionEvent) => void) | undefined
  /** @internal The time retention counts back from (default `Date.now`; tests). */
  clock?: (() => number) | undefined
  /** @internal Start PGlite from a `dumpDataDir()` snapshot (test fixtures). */
  loadDataDir?: Blob | File
}

/** The store's service API; every mutation takes the acting admin's id last. */
export interface Store {
  readonly kind: 'pglite' | 'postgres'
  readonly users: UsersService
  /**
   * Statement counts of users with rate or concurrency limits, shared by the instances on this
   * store (docs/roles-and-access.md#limits).
   */
  readonly statementCounters: StatementCounters
  readonly roles: RolesService
  readonly datasources: DatasourcesService
  readonly access: AccessService
  readonly catalog: CatalogService
  /** Tags on catalog tables and columns, and classification proposals. */
  readonly catalogTags: CatalogTagsService
  readonly policies: PoliciesService
  readonly assignments: AssignmentsService
  readonly attributes: AttributesService
  readonly decisionFunctions: DecisionFunctionsService
  readonly relationships: RelationshipsService
  /** OpenID Connect providers for token logins (docs/sso.md). */
  readonly identityProviders: IdentityProvidersService
  readonly sessions: SessionContextBuilder
  /** Users' requests for time-bound roles and datasource access. */
  readonly accessRequests: AccessRequestsService
  /** Removes grants past their validity window, audited (runs by itself; `sweep` for tests). */
  readonly grantExpiry: Pick<GrantExpiry, 'sweep'>
  /**
   * Query-audit retention (`queryAuditRetentionDays`; runs by itself; `sweep` for tests):
   * `days` is undefined when entries are kept for ever.
   */
  readonly auditRetention: Pick<QueryAuditRetention, 'sweep' | 'days'>
  /** Admin tokens ended by logout. */
  readonly tokens: TokensService
  /** Console sign-ins through an identity provider, between redirect and callback. */
  readonly ssoSignIns: SsoSignInsService
  /** Failed and throttled logins of both planes, and cleared throttles. */
  readonly logins: LoginAudit
  readonly audit: {
    readonly admin: AdminAuditLog
    /** Audited admin actions that change nothing (previews). */
    readonly actions: AuditedActions
    readonly queries: {
      /** Queues one row (never blocks); false when dropped. */
      write(record: QueryAuditRecord): boolean
      /** Writes every queued row. */
      flush(): Promise<void>
      list: (filter?: QueryAuditFilter) => ReturnType<typeof listQueryAudit>
      readonly writer: QueryAuditWriter
      /** Every entry matching the filter, oldest first, with its chain link. */
      export(filter?: QueryAuditFilter): AsyncGenerator<ExportedQueryAuditEntry>
      /** Statements per hour and status over a window (for charts). */
      timeline(filter?: QueryAuditTimelineFilter): Promise<QueryAuditTimeline>
      /** What a shadow policy would have done over a window (docs/policies.md). */
      shadowReport(policyId: string, filter?: ShadowReportFilter): Promise<ShadowReport>
      /**
       * Removes the batches whose entries are all older than `before`, behind a signed
       * checkpoint, audited as `actorId` (default: the system actor); null when none were.
       * Retention and the CLI only: no admin API route leads here (docs/audit.md#retention).
       */
      removeOlderThan(before: Date, actorId?: string): Promise<QueryAuditRemoval | null>
    }
    /** Checks the hash chains of both audit logs (audit-verify.ts). */
    verify(onProgress?: (checked: number) => void): Promise<AuditVerification>
  }
  /**
   * Runs `fn` with services bound to one store transaction: every change it makes commits
   * together (audited and published once, at the end) or not at all. With `rollback`, the
   * transaction is always rolled back: what the store would hold after some changes, without
   * keeping, auditing or publishing any of them (what-if simulations).
   */
  transaction<T>(
    fn: (scoped: ScopedStore) => Promise<T>,
    options?: { rollback?: boolean },
  ): Promise<T>
  /** After-commit change events (docs/roles-and-access.md#changes-apply-live), local and from other instances. */
  readonly changes: {
    subscribe(listener: ChangeListener): () => void
    /** Tells the other instances on the store (PostgreSQL) about in-memory state; best effort. */
    signal(signal: InstanceSignal): void
    /** Hears the other instances' signals. */
    onSignal(listener: (signal: InstanceSignal) => void): () => void
    /**
     * Whether changes reach this instance now: always on PGlite (one process), on PostgreSQL while
     * the listener connection is subscribed; false once the store is closed (readiness).
     */
    readonly live: boolean
  }
  /** Shorthand for `sessions.buildSessionInput`. */
  buildSessionInput: SessionContextBuilder['buildSessionInput']
  /** Shorthand for `users.getUserForAuth`. */
  getUserForAuth: UsersService['getUserForAuth']
  /** Shorthand for `users.verifyPassword`. */
  verifyPassword: UsersService['verifyPassword']
  /** Flushes the query audit and closes connections. */
  close(): Promise<void>
  /** @internal The drizzle database, for tests and benchmarks. */
  readonly db: Db
  /** @internal The shared service context (audited-mutation helper). */
  readonly context: StoreContext
}

/** The committed drizzle-kit migrations, next to `src/` and `dist/`. */
const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url))

/**
 * Opens the store: embedded PGlite by default, PostgreSQL with `databaseUrl`. Applies the
 * migrations, and on PostgreSQL starts listening for other instances' change events.
 *
 * ```ts
 * const store = await createStore({ dataDir: './data' })
 * const admin = await store.users.create({ username: 'admin', password: 'Secret-123', is_admin: true }, BOOTSTRAP_ID)
 * const session = await store.buildSessionInput('alice', 'shop')
 * await store.close()
 * ```
 */
export async function createStore(options: CreateStoreOptions = {}): Promise<Store> {
  retentionDays(options.queryAuditRetentionDays)
  const { key, source } = await loadSecretKey({
    secretKey: options.secretKey,
    dataDir: options.dataDir,
  })
  if (options.databaseUrl && source === 'ephemeral') {
    // Several instances share one database: a per-process key would make secrets unreadable.
    throw new Error('a secret key is required with PostgreSQL: set PALISADE_SECRET_KEY or dataDir')
  }
  const driver: StoreDriver = options.databaseUrl
    ? await openPostgresDriver({ databaseUrl: options.databaseUrl })
    : await openPgliteDriver({ dataDir: options.dataDir, loadDataDir: options.loadDataDir })
  try {
    await driver.migrate(MIGRATIONS)
  } catch (error) {
    await driver.close()
    throw error
  }
  const feed = new ChangeFeed(randomUUID(), options.onChangeFeed)
  const secrets = new SecretBox(key)
  const chainKey = secrets.derive(CHAIN_KEY_PURPOSE)
  const deps = { db: driver.db, driver, feed, chain: new AuditChain(chainKey) }
  const context: StoreContext = {
    db: driver.db,
    driver,
    feed,
    secrets,
    mutate: (actorId, fn) => runMutation(deps, actorId, fn),
  }
  if (driver.listen) {
    feed.attach({
      get listening() {
        return driver.listening ?? false
      },
      notify: (payload) => driver.notify?.(payload),
    })
    try {
      await driver.listen({
        channel: CHANGE_CHANNEL,
        applicationName: listenerApplicationName(feed.instanceId),
        onMessage: (payload) => feed.receive(payload),
        onResumed: () => feed.resumed(),
        onLost: (error) => feed.lost(error),
      })
    } catch (error) {
      await driver.close()
      throw error
    }
  }
  // Batches are hashed, encoded and stored off the serving thread (docs/audit.md).
  const writer = new QueryAuditWriter(await driver.auditSink(chainKey, randomUUID()), {
    ...options.queryAudit,
  })
  const users = new UsersService(context)
  const logins = new LoginAudit(driver.db, options.onLoginAuditProblem)
  const sessions = new SessionContextBuilder(context)
  feed.subscribe((change) => sessions.hear(change))
  const grantExpiry = new GrantExpiry(context)
  if (options.grantExpiry !== false) grantExpiry.start()
  const auditRetention = new QueryAuditRetention(context, chainKey, {
    days: options.queryAuditRetentionDays,
    clock: options.clock,
    onEvent: options.onQueryAuditRetention,
  })
  auditRetention.start()
  let closed = false
  const transaction = <T>(
    fn: (scoped: ScopedStore) => Promise<T>,
    options: { rollback?: boolean } = {},
  ): Promise<T> =>
    runTransaction(
      deps,
      (outer) => {
        const scoped: StoreContext = {
          ...context,
          db: outer.db,
          mutate: (actorId, f) => runMutation(outer, actorId, f),
        }
        return fn({
          users: new UsersService(scoped),
          roles: new RolesService(scoped),
          datasources: new DatasourcesService(scoped),
          access: new AccessService(scoped),
          policies: new PoliciesService(scoped),
          assignments: new AssignmentsService(scoped),
          attributes: new AttributesService(scoped),
          decisionFunctions: new DecisionFunctionsService(scoped),
          catalog: new CatalogService(scoped),
          catalogTags: new CatalogTagsService(scoped),
          identityProviders: new IdentityProvidersService(scoped),
          sessions: new SessionContextBuilder(scoped),
        })
      },
      options.rollback ?? false,
    )
  return {
    transaction,
    kind: driver.kind,
    users,
    statementCounters: new StatementCounters(driver.db),
    roles: new RolesService(context),
    datasources: new DatasourcesService(context),
    access: new AccessService(context),
    catalog: new CatalogService(context),
    catalogTags: new CatalogTagsService(context),
    policies: new PoliciesService(context),
    assignments: new AssignmentsService(context),
    attributes: new AttributesService(context),
    decisionFunctions: new DecisionFunctionsService(context),
    relationships: new RelationshipsService(context),
    identityProviders: new IdentityProvidersService(context),
    sessions,
    accessRequests: new AccessRequestsService(context),
    grantExpiry,
    auditRetention,
    tokens: new TokensService(context),
    ssoSignIns: new SsoSignInsService(context),
    logins,
    audit: {
      admin: new AdminAuditLog(context),
      actions: new AuditedActions(context),
      queries: {
        write: (record) => writer.write(record),
        flush: () => writer.flush(),
        list: (filter) => listQueryAudit(driver.db, filter),
        export: (filter) => exportQueryAudit(driver.db, filter),
        timeline: (filter) => queryAuditTimeline(driver.db, filter),
        shadowReport: (policyId, filter) => shadowReport(driver.db, policyId, filter),
        removeOlderThan: (before, actorId) => auditRetention.removeOlderThan(before, actorId),
        writer,
      },
      verify: (onProgress) => verifyAuditChains(driver.db, chainKey, onProgress),
    },
    changes: {
      subscribe: (listener) => feed.subscribe(listener),
      signal: (signal) => feed.signal(signal),
      onSignal: (listener) => feed.onSignal(listener),
      get live() {
        return !closed && (driver.listen ? (driver.listening ?? false) : true)
      },
    },
    buildSessionInput: (username, datasourceName) =>
      sessions.buildSessionInput(username, datasourceName),
    getUserForAuth: (username) => users.getUserForAuth(username),
    verifyPassword: (username, password) => users.verifyPassword(username, password),
    async close() {
      if (closed) return
      closed = true
      await grantExpiry.stop()
      await auditRetention.stop()
      await writer.close()
      await logins.flush()
      await driver.close()
    },
    db: driver.db,
    context,
  }
}

/** The services of one store transaction (Store.transaction). */
export interface ScopedStore {
  readonly users: UsersService
  readonly roles: RolesService
  readonly datasources: DatasourcesService
  readonly access: AccessService
  readonly policies: PoliciesService
  readonly assignments: AssignmentsService
  readonly attributes: AttributesService
  readonly decisionFunctions: DecisionFunctionsService
  readonly catalog: CatalogService
  readonly catalogTags: CatalogTagsService
  readonly identityProviders: IdentityProvidersService
  readonly sessions: SessionContextBuilder
}
