import { sql } from 'drizzle-orm'
import { type AuditChain, canonicalAdminEntry } from '../audit/audit-chain.js'
import { adminAuditLog } from '../tables.js'
import {
  CHANGE_CHANNEL,
  type ChangeConfirmationWait,
  type ChangeEvent,
  type ChangeFeed,
  encodeChangePayload,
  LISTENER_APPLICATION_NAME,
} from './change-feed.js'
import { type Db, rowsOf, type StoreDriver, type Tx } from './db.js'
import { uuidv7 } from './ids.js'

/** Admin-audit resource types (docs/audit.md#admin-audit). */
export const AUDIT_RESOURCE_TYPES = [
  'user',
  'datasource',
  'policy',
  'policy_assignment',
  'role',
  'role_member',
  'role_inheritance',
  'data_source_access',
  'attribute_definition',
  'decision_function',
  'table_relationship',
  'column_anchor',
  'access_request',
  'catalog_tag',
  /** OpenID Connect providers for token logins (docs/sso.md). */
  'identity_provider',
  /** Retention removing old query-audit entries (docs/audit.md#retention). */
  'query_audit',
] as const

export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number]

/**
 * Admin-audit actions (docs/audit.md#admin-audit; `preview`, `simulate`: docs/preview-and-simulation.md;
 * `approve`, `deny`, `cancel`: access requests, docs/policies.md).
 */
export const AUDIT_ACTIONS = [
  'create',
  'update',
  'delete',
  'assign',
  'unassign',
  'add_member',
  'remove_member',
  'add_parent',
  'remove_parent',
  'grant_access',
  'revoke_access',
  'preview',
  'simulate',
  'approve',
  'deny',
  'cancel',
  'propose',
  'accept',
  'reject',
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** Thrown when a write path would commit without an audit entry: a server bug (docs/audit.md#admin-audit). */
export class MissingAuditEntryError extends Error {
  constructor() {
    super('mutation would commit without an admin audit entry')
    this.name = 'MissingAuditEntryError'
  }
}

/** One running mutation: its transaction, the audit entries and change events it queues. */
export class Mutation {
  readonly tx: Tx
  readonly actorId: string
  /** One timestamp for every row and audit entry of this mutation. */
  readonly now = new Date()
  readonly entries: (typeof adminAuditLog.$inferInsert)[] = []
  readonly events: ChangeEvent[] = []
  #noop = false

  constructor(tx: Tx, actorId: string) {
    this.tx = tx
    this.actorId = actorId
  }

  /** Queues an admin-audit entry, written in this transaction. */
  audit(
    resourceType: AuditResourceType,
    resourceId: string,
    action: AuditAction,
    changes: Record<string, unknown> | null,
  ): void {
    this.entries.push({
      id: uuidv7(),
      resourceType,
      resourceId,
      action,
      actorId: this.actorId,
      changes: changes === null ? null : JSON.stringify(changes),
      createdAt: this.now,
    })
  }

  /** Queues change events, published only after commit. */
  invalidate(...events: ChangeEvent[]): void {
    this.events.push(...events)
  }

  /** Declares that nothing changed: the transaction rolls back and nothing is audited. */
  noop(): void {
    this.#noop = true
  }

  get isNoop(): boolean {
    return this.#noop
  }
}

/**
 * Queues the NOTIFY (delivered to other instances only if the transaction commits) and lists the
 * instances listening now, whose confirmations the mutation waits for after commit. A listener
 * that subscribes after this point belongs to an instance that is new or that marks every session
 * once it has (re)subscribed, so it is not waited for.
 */
async function notifyInstances(
  tx: Tx,
  feed: ChangeFeed,
  events: readonly ChangeEvent[],
): Promise<ChangeConfirmationWait> {
  const seq = feed.nextSeq()
  const payload = encodeChangePayload(feed.instanceId, events, seq)
  const prefix = `${LISTENER_APPLICATION_NAME} `
  const [row] = await rowsOf<{ peers: string[] }>(
    tx.execute(sql`SELECT pg_notify(${CHANGE_CHANNEL}, ${payload}),
      ARRAY(SELECT substr(application_name, ${prefix.length + 1}) FROM pg_stat_activity
            WHERE datname = current_database()
              AND starts_with(application_name, ${prefix})) AS peers`),
  )
  return feed.expectConfirmations(seq, row?.peers ?? [])
}

class NoopRollback<T> extends Error {
  constructor(readonly value: T) {
    super('no-op mutation')
  }
}

/** Where mutations inside a larger transaction leave their audit entries and events. */
export interface OuterTransaction {
  readonly entries: (typeof adminAuditLog.$inferInsert)[]
  readonly events: ChangeEvent[]
}

export interface MutationDeps {
  db: Db
  driver: StoreDriver
  feed: ChangeFeed
  chain: AuditChain
  /**
   * Set inside a larger transaction (Store.transaction): each mutation runs in a savepoint and
   * hands its entries and events to it, to be written, linked and published once, at its end.
   */
  outer?: OuterTransaction
}

/**
 * Writes `entries` linked into the admin chain and queues the NOTIFY, inside `tx`; returns what
 * to do after the commit (move the chain, publish locally, wait for the other instances) and
 * after a rollback.
 */
async function writeEntries(
  deps: MutationDeps,
  tx: Tx,
  entries: (typeof adminAuditLog.$inferInsert)[],
  events: ChangeEvent[],
) {
  const release = await deps.chain.acquire()
  try {
    const { links, commit } = deps.chain.link(
      entries.map((e) => canonicalAdminEntry({ ...e, createdAt: e.createdAt as Date })),
    )
    if (entries.length > 0) {
      await tx.insert(adminAuditLog).values(entries.map((e, i) => ({ ...e, ...links[i] })))
    }
    const confirmations =
      deps.driver.kind === 'postgres' && events.length > 0
        ? await notifyInstances(tx, deps.feed, events)
        : undefined
    return {
      async committed() {
        commit()
        release()
        deps.feed.emit(events, 'local')
        await confirmations?.settled()
      },
      aborted() {
        release()
        confirmations?.cancel()
      },
    }
  } catch (error) {
    release()
    throw error
  }
}

/**
 * Runs `fn` in one transaction with its admin-audit entries (docs/audit.md#admin-audit): the entries are inserted
 * just before commit, a path that queued none fails and rolls back, and change events are
 * published after commit (in-process, and on PostgreSQL through NOTIFY in the same transaction).
 * On PostgreSQL it returns once the other instances confirmed they marked their sessions (or
 * after a bounded wait), so a client's next statement on any instance sees the change.
 */
export async function runMutation<T>(
  deps: MutationDeps,
  actorId: string,
  fn: (m: Mutation) => Promise<T>,
): Promise<T> {
  let written: Awaited<ReturnType<typeof writeEntries>> | undefined
  try {
    const result = await deps.db.transaction(async (tx) => {
      const m = new Mutation(tx, actorId)
      const value = await fn(m)
      if (m.isNoop) throw new NoopRollback(value)
      if (m.entries.length === 0) throw new MissingAuditEntryError()
      if (deps.outer) {
        deps.outer.entries.push(...m.entries)
        deps.outer.events.push(...m.events)
      } else {
        written = await writeEntries(deps, tx, m.entries, m.events)
      }
      return value
    })
    await written?.committed()
    return result
  } catch (error) {
    written?.aborted()
    if (error instanceof NoopRollback) return error.value as T
    throw error
  }
}

/**
 * Runs `fn` in one transaction in which every mutation runs in a savepoint; at the end, their
 * audit entries are written and linked and their events published, all at once, or, with
 * `rollback`, everything is discarded (nothing written, published or linked).
 */
export async function runTransaction<T>(
  deps: MutationDeps,
  fn: (outer: MutationDeps & { db: Tx }) => Promise<T>,
  rollback: boolean,
): Promise<T> {
  let written: Awaited<ReturnType<typeof writeEntries>> | undefined
  try {
    const result = await deps.db.transaction(async (tx) => {
      const outer: OuterTransaction = { entries: [], events: [] }
      const value = await fn({ ...deps, db: tx, outer })
      if (rollback) throw new NoopRollback(value)
      written = await writeEntries(deps, tx, outer.entries, outer.events)
      return value
    })
    await written?.committed()
    return result
  } catch (error) {
    written?.aborted()
    if (error instanceof NoopRollback) return error.value as T
    throw error
  }
}
