import { sql } from 'drizzle-orm'
import { type AuditChain, canonicalAdminEntry } from './audit-chain.js'
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
import { adminAuditLog } from './schema/index.js'

/** Admin-audit resource types (spec 2.2 plus admin-api 18.2). */
export type AuditResourceType =
  | 'user'
  | 'role'
  | 'policy'
  | 'datasource'
  | 'attribute_definition'
  | 'policy_assignment'
  | 'role_member'
  | 'role_inheritance'
  | 'data_source_access'
  | 'decision_function'
  | 'table_relationship'
  | 'column_anchor'

/** Admin-audit actions (spec 2.2; `preview`, `simulate`: docs/preview-and-simulation.md). */
export type AuditAction =
  | 'create'
  | 'update'
  | 'delete'
  | 'assign'
  | 'unassign'
  | 'add_member'
  | 'remove_member'
  | 'add_parent'
  | 'remove_parent'
  | 'grant_access'
  | 'revoke_access'
  | 'preview'
  | 'simulate'

/** Thrown when a write path would commit without an audit entry: a server bug (admin-api 1.6). */
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

/**
 * Runs `fn` in one transaction with its admin-audit entries (spec 2.2): the entries are inserted
 * just before commit, a path that queued none fails and rolls back, and change events are
 * published after commit (in-process, and on PostgreSQL through NOTIFY in the same transaction).
 * On PostgreSQL it returns once the other instances confirmed they marked their sessions (or
 * after a bounded wait), so a client's next statement on any instance sees the change.
 */
export async function runMutation<T>(
  deps: {
    db: Db
    driver: StoreDriver
    feed: ChangeFeed
    chain: AuditChain
    /** False inside a transaction that is rolled back anyway: no NOTIFY, no local event. */
    publish?: boolean
  },
  actorId: string,
  fn: (m: Mutation) => Promise<T>,
): Promise<T> {
  let events: ChangeEvent[] = []
  let confirmations: ChangeConfirmationWait | undefined
  // The admin audit's hash chain: held from linking the entries until the commit settled.
  let release: (() => void) | undefined
  let commitLinks: (() => void) | undefined
  try {
    const result = await deps.db.transaction(async (tx) => {
      const m = new Mutation(tx, actorId)
      const value = await fn(m)
      if (m.isNoop) throw new NoopRollback(value)
      if (m.entries.length === 0) throw new MissingAuditEntryError()
      release = await deps.chain.acquire()
      const { links, commit } = deps.chain.link(
        m.entries.map((e) => canonicalAdminEntry({ ...e, createdAt: e.createdAt as Date })),
      )
      await tx.insert(adminAuditLog).values(m.entries.map((e, i) => ({ ...e, ...links[i] })))
      commitLinks = commit
      if (deps.publish !== false && deps.driver.kind === 'postgres' && m.events.length > 0) {
        confirmations = await notifyInstances(tx, deps.feed, m.events)
      }
      events = m.events
      return value
    })
    commitLinks?.()
    release?.()
    if (deps.publish !== false) deps.feed.emit(events, 'local')
    await confirmations?.settled()
    return result
  } catch (error) {
    release?.()
    confirmations?.cancel()
    if (error instanceof NoopRollback) return error.value as T
    throw error
  }
}
