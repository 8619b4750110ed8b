import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm'
import * as v from 'valibot'
import {
  type GrantWindow,
  sameWindow,
  toWindow,
  windowFields,
  windowIfSet,
} from '../access/grant-window.js'
import type { StoreContext } from '../kernel/context.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import { ResourceConflictError, ResourceNotFoundError, StoreError } from '../kernel/errors.js'
import type { Mutation } from '../kernel/mutation.js'
import { parseBody, uuidString } from '../kernel/validation.js'
import { roleMembers, roles, users } from '../tables.js'

/** A direct member as role detail and a user's role list show it. */
export interface RoleMemberWindow {
  valid_from?: string | null
  valid_until?: string | null
}

const membersSchema = v.object({
  user_ids: v.pipe(
    v.array(uuidString, 'expected an array of uuids'),
    v.minLength(1, 'at least one user id'),
    v.maxLength(1000, 'at most 1000 user ids'),
  ),
  ...windowFields,
})

const windowSchema = v.object(windowFields)

/** Membership rows that have not ended (an ended row awaits the expiry sweep). */
export const memberNotEnded = or(
  isNull(roleMembers.validUntil),
  gt(roleMembers.validUntil, sql`now()`),
)

async function requireRole(db: Db, id: string): Promise<void> {
  const [row] = await db.select({ id: roles.id }).from(roles).where(eq(roles.id, id))
  if (!row) throw new ResourceNotFoundError('role')
}

/** The direct members of a role with their windows, sorted by username. */
export async function listMembers(
  db: Db,
  roleId: string,
): Promise<({ id: string; username: string } & RoleMemberWindow)[]> {
  const rows = await db
    .select({
      id: users.id,
      username: users.username,
      validFrom: roleMembers.validFrom,
      validUntil: roleMembers.validUntil,
    })
    .from(roleMembers)
    .innerJoin(users, eq(users.id, roleMembers.userId))
    .where(and(eq(roleMembers.roleId, roleId), memberNotEnded))
    .orderBy(asc(users.username))
  return rows.map(({ id, username, ...w }) => ({ id, username, ...windowIfSet(w) }))
}

/** The audit entry of a membership that reached its `valid_until`. */
export function auditExpiredMember(m: Mutation, r: typeof roleMembers.$inferSelect): void {
  m.audit('role_member', r.roleId, 'remove_member', {
    user_id: r.userId,
    role_id: r.roleId,
    valid_until: r.validUntil?.toISOString() ?? null,
    reason: 'expired',
  })
}

function membershipAudit(m: Mutation, roleId: string, userId: string, w: GrantWindow): void {
  m.audit('role_member', roleId, 'add_member', {
    user_id: userId,
    role_id: roleId,
    ...windowIfSet(w),
  })
}

/** Adds direct members, all or nothing, optionally for a window (docs/roles-and-access.md#roles). */
export async function addMembers(
  ctx: StoreContext,
  roleId: string,
  input: { user_ids: string[]; valid_from?: string | null; valid_until?: string | null },
  actorId: string,
): Promise<void> {
  await ctx.mutate(actorId, async (m) => {
    await requireRole(m.tx, roleId)
    const body = parseBody(membersSchema, input)
    const window = toWindow(body, m.now)
    const userIds = [...new Set(body.user_ids)]
    const found = await m.tx.select({ id: users.id }).from(users).where(inArray(users.id, userIds))
    const known = new Set(found.map((u) => u.id))
    const missing = userIds.filter((u) => !known.has(u))
    if (missing.length > 0) {
      throw new StoreError(
        'not_found',
        'user not found',
        missing.map((u) => ({
          field: `user_ids[${userIds.indexOf(u)}]`,
          code: 'not_found',
          message: `user ${u} not found`,
        })),
      )
    }
    // An ended membership the sweep has not removed yet no longer exists: expire it here.
    const ended = await m.tx
      .delete(roleMembers)
      .where(
        and(
          eq(roleMembers.roleId, roleId),
          inArray(roleMembers.userId, userIds),
          sql`${roleMembers.validUntil} <= now()`,
        ),
      )
      .returning()
    for (const row of ended) auditExpiredMember(m, row)
    const conflict = () => new ResourceConflictError('user is already a member', 'user_ids')
    const existing = await m.tx
      .select({ id: roleMembers.userId })
      .from(roleMembers)
      .where(and(eq(roleMembers.roleId, roleId), inArray(roleMembers.userId, userIds)))
    if (existing.length > 0) throw conflict()
    await onUniqueViolation(
      () =>
        m.tx
          .insert(roleMembers)
          .values(userIds.map((userId) => ({ roleId, userId, ...window, createdAt: m.now }))),
      conflict,
    )
    for (const userId of userIds) membershipAudit(m, roleId, userId, window)
    m.invalidate({ type: 'user', userIds })
  })
}

/**
 * Makes `userId` a direct member for exactly `window` (open bounds: from now on, for good),
 * creating or replacing the membership; a no-op when it already holds that window.
 */
export async function grantMembership(
  m: Mutation,
  roleId: string,
  userId: string,
  window: GrantWindow,
): Promise<void> {
  const [current] = await m.tx
    .select()
    .from(roleMembers)
    .where(and(eq(roleMembers.roleId, roleId), eq(roleMembers.userId, userId)))
  if (current && sameWindow(current, window)) return
  if (current) {
    await m.tx
      .update(roleMembers)
      .set(window)
      .where(and(eq(roleMembers.roleId, roleId), eq(roleMembers.userId, userId)))
  } else {
    await m.tx.insert(roleMembers).values({ roleId, userId, ...window, createdAt: m.now })
  }
  membershipAudit(m, roleId, userId, window)
  m.invalidate({ type: 'user', userIds: [userId] })
}

/** `PUT /roles/{id}/members/{user_id}`: create or re-window one membership. */
export async function putMember(
  ctx: StoreContext,
  roleId: string,
  userId: string,
  input: { valid_from?: string | null; valid_until?: string | null },
  actorId: string,
): Promise<void> {
  await ctx.mutate(actorId, async (m) => {
    await requireRole(m.tx, roleId)
    const window = toWindow(parseBody(windowSchema, input), m.now)
    const [user] = await m.tx.select({ id: users.id }).from(users).where(eq(users.id, userId))
    if (!user) throw new ResourceNotFoundError('user')
    const before = m.entries.length
    await grantMembership(m, roleId, userId, window)
    if (m.entries.length === before) m.noop()
  })
}

/** Removes one direct member; 404 when the role is unknown or the user is not a member. */
export async function removeMember(
  ctx: StoreContext,
  roleId: string,
  userId: string,
  actorId: string,
): Promise<void> {
  await ctx.mutate(actorId, async (m) => {
    await requireRole(m.tx, roleId)
    const removed = await m.tx
      .delete(roleMembers)
      .where(and(eq(roleMembers.roleId, roleId), eq(roleMembers.userId, userId), memberNotEnded))
      .returning()
    if (removed.length === 0) throw new ResourceNotFoundError('member')
    m.audit('role_member', roleId, 'remove_member', { user_id: userId, role_id: roleId })
    m.invalidate({ type: 'user', userIds: [userId] })
  })
}
