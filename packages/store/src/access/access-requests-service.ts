import { and, count, desc, eq, type SQL } from 'drizzle-orm'
import * as v from 'valibot'
import { iso, isoNow, type StoreContext } from '../kernel/context.js'
import type { Db } from '../kernel/db.js'
import { ResourceNotFoundError, StoreError, ValidationError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { boundedString, parseBody, uuidString } from '../kernel/validation.js'
import { accessRequests, datasources, roles, users } from '../tables.js'
import { duration, durationAlias, durationOf } from './request-duration.js'
import { checkTarget, grantFor } from './request-grant.js'

/** Pending requests one user may have open at once. */
export const MAX_PENDING_PER_USER = 20

export type AccessRequestStatus = 'pending' | 'approved' | 'denied' | 'cancelled'

/** An access request as the admin API returns it (docs/policies.md "Requested access"). */
export interface AccessRequest {
  id: string
  user_id: string
  username: string
  kind: 'role' | 'datasource'
  role_id: string | null
  role_name: string | null
  datasource_id: string | null
  datasource_name: string | null
  reason: string
  duration_seconds: number
  status: AccessRequestStatus
  decided_by: string | null
  decided_at: string | null
  decision_comment: string | null
  /** End of the granted window (approved requests). */
  granted_until: string | null
  created_at: string
  updated_at: string
}

const createSchema = v.object({
  role_id: v.optional(v.nullable(uuidString)),
  datasource_id: v.optional(v.nullable(uuidString)),
  duration_seconds: v.optional(duration),
  duration: durationAlias,
  reason: boundedString(1, 2000),
})

const comment = v.optional(v.nullable(boundedString(0, 2000)))
const approveSchema = v.object({
  duration_seconds: v.optional(duration),
  duration: durationAlias,
  comment,
})

const denySchema = v.object({ comment })

/** Requests joined with their user, role and datasource names. */
async function select(db: Db, where: SQL | undefined, limit?: number, offset = 0) {
  const q = db
    .select({
      r: accessRequests,
      username: users.username,
      roleName: roles.name,
      dsName: datasources.name,
    })
    .from(accessRequests)
    .innerJoin(users, eq(users.id, accessRequests.userId))
    .leftJoin(roles, eq(roles.id, accessRequests.roleId))
    .leftJoin(datasources, eq(datasources.id, accessRequests.datasourceId))
    .where(where)
    .orderBy(desc(accessRequests.createdAt), desc(accessRequests.id))
  const rows = limit === undefined ? await q : await q.limit(limit).offset(offset)
  return rows.map(
    ({ r, username, roleName, dsName }): AccessRequest => ({
      id: r.id,
      user_id: r.userId,
      username,
      kind: r.kind as AccessRequest['kind'],
      role_id: r.roleId,
      role_name: roleName,
      datasource_id: r.datasourceId,
      datasource_name: dsName,
      reason: r.reason,
      duration_seconds: r.durationSeconds,
      status: r.status as AccessRequestStatus,
      decided_by: r.decidedBy,
      decided_at: iso(r.decidedAt),
      decision_comment: r.decisionComment,
      granted_until: iso(r.grantedUntil),
      created_at: isoNow(r.createdAt),
      updated_at: isoNow(r.updatedAt),
    }),
  )
}

/**
 * Requests for time-bound access (docs/policies.md "Requested access"): any user asks for a
 * role or a datasource for a while, with a reason; an admin other than the requester approves
 * (possibly for less time) or denies; approval creates the time-bound grant. All audited.
 */
export class AccessRequestsService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Files a request as `userId` (who also is the audit actor). */
  async create(
    userId: string,
    input: {
      role_id?: string | null
      datasource_id?: string | null
      duration_seconds?: number
      /** ISO 8601 (`PT8H`) or seconds: another spelling of `duration_seconds`. */
      duration?: number | string
      reason: string
    },
  ): Promise<AccessRequest> {
    const id = await this.#ctx.mutate(userId, async (m) => {
      const body = parseBody(createSchema, input)
      const seconds = durationOf(body, true) as number
      const target = await checkTarget(m.tx, body.role_id ?? null, body.datasource_id ?? null)
      const [pending] = await m.tx
        .select({ n: count() })
        .from(accessRequests)
        .where(and(eq(accessRequests.userId, userId), eq(accessRequests.status, 'pending')))
      if ((pending?.n ?? 0) >= MAX_PENDING_PER_USER) {
        throw new StoreError(
          'request_limit',
          `at most ${MAX_PENDING_PER_USER} requests may be pending at once`,
        )
      }
      const same = await m.tx
        .select({ id: accessRequests.id })
        .from(accessRequests)
        .where(
          and(
            eq(accessRequests.userId, userId),
            eq(accessRequests.status, 'pending'),
            target.kind === 'role'
              ? eq(accessRequests.roleId, target.id)
              : eq(accessRequests.datasourceId, target.id),
          ),
        )
      if (same.length > 0) {
        throw new StoreError('already_exists', 'a request for this is already pending', [
          { field: `${target.kind}_id`, code: 'duplicate', message: 'already requested' },
        ])
      }
      const row = {
        id: uuidv7(),
        userId,
        kind: target.kind,
        roleId: target.kind === 'role' ? target.id : null,
        datasourceId: target.kind === 'datasource' ? target.id : null,
        reason: body.reason,
        durationSeconds: seconds,
        status: 'pending',
        createdAt: m.now,
        updatedAt: m.now,
      }
      await m.tx.insert(accessRequests).values(row)
      m.audit('access_request', row.id, 'create', {
        user_id: userId,
        kind: target.kind,
        [`${target.kind}_id`]: target.id,
        duration_seconds: seconds,
        reason: body.reason,
      })
      return row.id
    })
    return this.get(id)
  }

  /** Newest first; `user_id` limits the list to one requester, `status` to one state. */
  async list(
    input: PageInput & { status?: string | undefined; user_id?: string | undefined } = {},
  ): Promise<Page<AccessRequest>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const conds: SQL[] = []
    if (input.status !== undefined) {
      if (!['pending', 'approved', 'denied', 'cancelled'].includes(input.status)) {
        throw new StoreError('invalid_parameter', 'status is not a request status', [
          { field: 'status', code: 'invalid_enum', message: 'status is not a request status' },
        ])
      }
      conds.push(eq(accessRequests.status, input.status))
    }
    if (input.user_id !== undefined) conds.push(eq(accessRequests.userId, input.user_id))
    const where = and(...conds)
    const data = await select(this.#ctx.db, where, pageSize, offset)
    const [total] = await this.#ctx.db.select({ n: count() }).from(accessRequests).where(where)
    return { data, total: total?.n ?? 0, page, page_size: pageSize }
  }

  async get(id: string): Promise<AccessRequest> {
    const [row] = await select(this.#ctx.db, eq(accessRequests.id, id))
    if (!row) throw new ResourceNotFoundError('access request')
    return row
  }

  /**
   * Approves a pending request (409 `not_pending` otherwise; 403 `self_approval` for the
   * requester) for its duration or a shorter one, creating the time-bound grant. A grant the
   * user already holds that lasts at least as long is kept as it is, never shortened.
   */
  async approve(
    id: string,
    input: { duration_seconds?: number; duration?: number | string; comment?: string | null },
    adminId: string,
  ): Promise<AccessRequest> {
    await this.#ctx.mutate(adminId, async (m) => {
      const body = parseBody(approveSchema, input ?? {})
      const request = await this.#pending(m, id, adminId)
      const seconds = durationOf(body, false) ?? request.durationSeconds
      if (seconds > request.durationSeconds) {
        throw new ValidationError([
          {
            field: 'duration_seconds',
            code: 'out_of_range',
            message: 'an approval cannot give more time than was requested',
          },
        ])
      }
      const until = new Date(m.now.getTime() + seconds * 1000)
      const target = await checkTarget(m.tx, request.roleId, request.datasourceId)
      const effectiveUntil = await grantFor(m, request.userId, target, until)
      await m.tx
        .update(accessRequests)
        .set({
          status: 'approved',
          decidedBy: adminId,
          decidedAt: m.now,
          decisionComment: body.comment ?? null,
          grantedUntil: effectiveUntil,
          updatedAt: m.now,
        })
        .where(eq(accessRequests.id, id))
      m.audit('access_request', id, 'approve', {
        user_id: request.userId,
        [`${target.kind}_id`]: target.id,
        duration_seconds: seconds,
        granted_until: iso(effectiveUntil),
        comment: body.comment ?? null,
      })
    })
    return this.get(id)
  }

  /** Denies a pending request. */
  async deny(id: string, input: { comment?: string | null }, adminId: string) {
    return this.#close(id, 'denied', parseBody(denySchema, input ?? {}).comment ?? null, adminId)
  }

  /** The requester withdraws their own pending request (404 for anyone else's). */
  async cancel(id: string, userId: string): Promise<AccessRequest> {
    const [row] = await this.#ctx.db
      .select({ userId: accessRequests.userId })
      .from(accessRequests)
      .where(eq(accessRequests.id, id))
    if (!row || row.userId !== userId) throw new ResourceNotFoundError('access request')
    return this.#close(id, 'cancelled', null, userId)
  }

  async #close(
    id: string,
    status: 'denied' | 'cancelled',
    comment: string | null,
    actorId: string,
  ): Promise<AccessRequest> {
    await this.#ctx.mutate(actorId, async (m) => {
      const request = await this.#pending(m, id, status === 'denied' ? actorId : null)
      await m.tx
        .update(accessRequests)
        .set({
          status,
          decidedBy: actorId,
          decidedAt: m.now,
          decisionComment: comment,
          updatedAt: m.now,
        })
        .where(eq(accessRequests.id, id))
      m.audit('access_request', id, status === 'denied' ? 'deny' : 'cancel', {
        user_id: request.userId,
        comment,
      })
    })
    return this.get(id)
  }

  /** The request, locked, when it is pending; `decider` may not be the requester. */
  async #pending(m: Mutation, id: string, decider: string | null) {
    const [request] = await m.tx
      .select()
      .from(accessRequests)
      .where(eq(accessRequests.id, id))
      .for('update')
    if (!request) throw new ResourceNotFoundError('access request')
    if (request.status !== 'pending') {
      throw new StoreError('not_pending', `the request is already ${request.status}`)
    }
    if (decider !== null && decider === request.userId) {
      throw new StoreError(
        'self_approval',
        'a request is decided by an admin other than its requester',
      )
    }
    return request
  }
}
