import { and, asc, count, desc, eq, type SQL, sql } from 'drizzle-orm'
import type { StoreContext } from '../kernel/context.js'
import {
  AUDIT_ACTIONS,
  AUDIT_RESOURCE_TYPES,
  type AuditAction,
  type AuditResourceType,
} from '../kernel/mutation.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { adminAuditLog } from '../tables.js'
import { type ExportedLink, linkOf } from './audit-chain.js'
import { invalidParameter, type TimeInput, timeRange, uuidFilter } from './audit-filters.js'

/** One admin-audit entry (docs/audit.md#admin-audit); `changes` is JSON text. */
export interface AdminAuditEntry {
  id: string
  resource_type: AuditResourceType
  resource_id: string
  action: AuditAction
  actor_id: string
  changes: string | null
  created_at: string
}

/** Filters of `GET /audit/admin` (docs/audit.md#reading-the-logs). */
export interface AdminAuditFilter extends PageInput {
  resource_type?: string
  resource_id?: string
  actor_id?: string
  action?: string
  from?: TimeInput
  to?: TimeInput
  since?: TimeInput
  until?: TimeInput
}

const RESOURCE_TYPES: ReadonlySet<string> = new Set(AUDIT_RESOURCE_TYPES)
const ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS)

/** The filters of `GET /audit/admin` as one condition; 400 on a bad value. */
function adminAuditWhere(filter: AdminAuditFilter): SQL | undefined {
  if (filter.resource_type !== undefined && !RESOURCE_TYPES.has(filter.resource_type)) {
    throw invalidParameter('resource_type', 'is not a known resource type')
  }
  if (filter.action !== undefined && !ACTIONS.has(filter.action)) {
    throw invalidParameter('action', 'is not a known action')
  }
  return and(
    filter.resource_type ? eq(adminAuditLog.resourceType, filter.resource_type) : undefined,
    uuidFilter('resource_id', filter.resource_id)
      ? eq(adminAuditLog.resourceId, filter.resource_id as string)
      : undefined,
    uuidFilter('actor_id', filter.actor_id)
      ? eq(adminAuditLog.actorId, filter.actor_id as string)
      : undefined,
    filter.action ? eq(adminAuditLog.action, filter.action) : undefined,
    ...timeRange(adminAuditLog.createdAt, filter),
  )
}

function toEntry(r: typeof adminAuditLog.$inferSelect): AdminAuditEntry {
  return {
    id: r.id,
    resource_type: r.resourceType as AuditResourceType,
    resource_id: r.resourceId,
    action: r.action as AuditAction,
    actor_id: r.actorId,
    changes: r.changes,
    created_at: r.createdAt.toISOString(),
  }
}

/** Reads the append-only admin audit; there is deliberately no write, update or delete here. */
export class AdminAuditLog {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Newest first, paginated (default 50, cap 200). */
  async list(filter: AdminAuditFilter = {}): Promise<Page<AdminAuditEntry>> {
    const { page, pageSize, offset } = resolvePage(filter, { size: 50, cap: 200 })
    const where = adminAuditWhere(filter)
    const db = this.#ctx.db
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(adminAuditLog)
        .where(where)
        .orderBy(desc(adminAuditLog.createdAt), desc(adminAuditLog.id))
        .limit(pageSize)
        .offset(offset),
      db.select({ n: count() }).from(adminAuditLog).where(where),
    ])
    return { data: rows.map(toEntry), total: total?.n ?? 0, page, page_size: pageSize }
  }

  /**
   * Every entry matching `filter`, oldest first, with its hash-chain link, read in pages by
   * (created_at, id) so a large export holds one page at a time.
   */
  async *export(
    filter: AdminAuditFilter = {},
    pageSize = 1000,
  ): AsyncGenerator<AdminAuditEntry & ExportedLink> {
    const where = adminAuditWhere(filter)
    let after: { createdAt: Date; id: string } | undefined
    for (;;) {
      const rows = await this.#ctx.db
        .select()
        .from(adminAuditLog)
        .where(
          and(
            where,
            after
              ? sql`(${adminAuditLog.createdAt}, ${adminAuditLog.id}) > (${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)`
              : undefined,
          ),
        )
        .orderBy(asc(adminAuditLog.createdAt), asc(adminAuditLog.id))
        .limit(pageSize)
      for (const r of rows) yield { ...toEntry(r), ...linkOf(r) }
      const last = rows.at(-1)
      if (!last || rows.length < pageSize) return
      after = { createdAt: last.createdAt, id: last.id }
    }
  }

  /** Number of entries, optionally for one resource (tests and health checks). */
  async count(filter: { resource_id?: string } = {}): Promise<number> {
    const [row] = await this.#ctx.db
      .select({ n: count() })
      .from(adminAuditLog)
      .where(filter.resource_id ? eq(adminAuditLog.resourceId, filter.resource_id) : undefined)
    return row?.n ?? 0
  }
}
