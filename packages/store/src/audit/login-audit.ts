import { and, count, desc, eq, type SQL } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { loginAuditLog } from '../tables.js'
import { invalidParameter, type TimeInput, timeRange } from './audit-filters.js'

/** Which plane a login event happened on. */
export type LoginPlane = 'admin' | 'data'
/** A failed attempt, an attempt refused by the throttle, or a throttle an admin cleared. */
export type LoginOutcome = 'failed' | 'throttled' | 'cleared'

/** One login event to record. */
export interface LoginAuditRecord {
  plane: LoginPlane
  outcome: LoginOutcome
  /**
   * Why, for admins: `unknown_user`, `inactive_user`, `wrong_password`, `throttled_address`,
   * `throttled_account`, `cleared_address`, `cleared_account`.
   */
  reason: string
  /** The user name as the client typed it (may name no user). */
  username?: string | null
  client_address?: string | null
  /** The database the data-plane client asked for. */
  datasource_name?: string | null
  /** The admin who cleared a throttle. */
  actor_id?: string | null
}

/** A stored login event (`GET /audit/logins`). */
export interface LoginAuditEntry {
  id: string
  plane: LoginPlane
  outcome: LoginOutcome
  reason: string
  username: string | null
  client_address: string | null
  datasource_name: string | null
  actor_id: string | null
  created_at: string
}

/** Filters of `GET /audit/logins`. */
export interface LoginAuditFilter extends PageInput {
  plane?: string
  outcome?: string
  username?: string
  client_address?: string
  from?: TimeInput
  to?: TimeInput
}

type Insert = typeof loginAuditLog.$inferInsert

const PLANES = new Set(['admin', 'data'])
const OUTCOMES = new Set(['failed', 'throttled', 'cleared'])
/** Events waiting at most; under a flood of guesses the excess is dropped and counted. */
const MAX_QUEUE = 10_000
const BATCH = 500
const INTERVAL_MS = 100

/**
 * The login audit: events are queued and written in batches, so a flood of wrong passwords
 * costs one INSERT per 100 ms rather than one per attempt. Append-only, like the other audits.
 */
export class LoginAudit {
  readonly #db: Db
  readonly #onProblem: (message: string) => void
  #queue: Insert[] = []
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  readonly stats = { written: 0, dropped: 0 }

  constructor(db: Db, onProblem: (message: string) => void = () => {}) {
    this.#db = db
    this.#onProblem = onProblem
  }

  /** Queues one event; never blocks the login it describes. */
  record(event: LoginAuditRecord): void {
    if (this.#queue.length >= MAX_QUEUE) {
      if (this.stats.dropped++ === 0) this.#onProblem('login audit queue is full; dropping events')
      return
    }
    this.#queue.push({
      id: uuidv7(),
      plane: event.plane,
      outcome: event.outcome,
      reason: event.reason,
      username: clean(event.username),
      clientAddress: clean(event.client_address),
      datasourceName: clean(event.datasource_name),
      actorId: event.actor_id ?? null,
      createdAt: new Date(),
    })
    if (!this.#timer && !this.#running) {
      this.#timer = setTimeout(() => this.#kick(), INTERVAL_MS)
      this.#timer.unref()
    }
  }

  /** Writes everything queued so far. */
  async flush(): Promise<void> {
    while (this.#queue.length > 0 || this.#running) {
      if (!this.#running) this.#kick()
      await this.#running
    }
  }

  /** Lists events, newest first; default 50, cap 200. */
  async list(filter: LoginAuditFilter = {}): Promise<Page<LoginAuditEntry>> {
    const { page, pageSize, offset } = resolvePage(filter, { size: 50, cap: 200 })
    if (filter.plane !== undefined && !PLANES.has(filter.plane)) {
      throw invalidParameter('plane', 'must be admin or data')
    }
    if (filter.outcome !== undefined && !OUTCOMES.has(filter.outcome)) {
      throw invalidParameter('outcome', 'must be failed, throttled or cleared')
    }
    const conditions: (SQL | undefined)[] = [
      filter.plane ? eq(loginAuditLog.plane, filter.plane) : undefined,
      filter.outcome ? eq(loginAuditLog.outcome, filter.outcome) : undefined,
      filter.username !== undefined ? eq(loginAuditLog.username, filter.username) : undefined,
      filter.client_address !== undefined
        ? eq(loginAuditLog.clientAddress, filter.client_address)
        : undefined,
      ...timeRange(loginAuditLog.createdAt, filter),
    ]
    const where = and(...conditions)
    const [rows, [total]] = await Promise.all([
      this.#db
        .select()
        .from(loginAuditLog)
        .where(where)
        .orderBy(desc(loginAuditLog.createdAt), desc(loginAuditLog.id))
        .limit(pageSize)
        .offset(offset),
      this.#db.select({ n: count() }).from(loginAuditLog).where(where),
    ])
    return {
      data: rows.map((r) => ({
        id: r.id,
        plane: r.plane as LoginPlane,
        outcome: r.outcome as LoginOutcome,
        reason: r.reason,
        username: r.username,
        client_address: r.clientAddress,
        datasource_name: r.datasourceName,
        actor_id: r.actorId,
        created_at: r.createdAt.toISOString(),
      })),
      total: total?.n ?? 0,
      page,
      page_size: pageSize,
    }
  }

  #kick(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#running) return
    this.#running = this.#drain().finally(() => {
      this.#running = undefined
      if (this.#queue.length > 0) {
        this.#timer = setTimeout(() => this.#kick(), INTERVAL_MS)
        this.#timer.unref()
      }
    })
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, BATCH)
      try {
        await this.#db.insert(loginAuditLog).values(batch)
        this.stats.written += batch.length
      } catch (error) {
        // The store is down or refused the batch: these events are lost, and counted.
        this.stats.dropped += batch.length
        this.#onProblem(`login audit lost ${batch.length} events: ${String(error)}`)
        return
      }
    }
  }
}

/** Text PostgreSQL can store, at most 256 characters (names and addresses, never secrets). */
function clean(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null
  return text.slice(0, 256).replaceAll('\u0000', '\uFFFD')
}
