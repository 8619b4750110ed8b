import { and, asc, count, eq, ilike } from 'drizzle-orm'
import * as v from 'valibot'
import { windowIfSet } from '../access/grant-window.js'
import { diffFields, type StoreContext } from '../kernel/context.js'
import { onUniqueViolation } from '../kernel/db.js'
import {
  ResourceConflictError,
  ResourceNotFoundError,
  StoreError,
  ValidationError,
} from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import {
  type Limits,
  limitsSchema,
  normalizeLimits,
  patchLimits,
  storedLimits,
} from '../kernel/limits.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import {
  type EffectiveMember,
  effectiveMembers,
  loadEdges,
  lockRoleGraph,
  longestChain,
  MAX_ROLE_DEPTH,
  membersOf,
  reachable,
} from '../kernel/role-graph.js'
import { boundedString, identName, parseBody, uuidString } from '../kernel/validation.js'
import { removeAssignments } from '../policies/assignment-cascade.js'
import {
  datasourceAccess,
  policyAssignments,
  roleInheritance,
  roleMembers,
  roles,
  users,
} from '../tables.js'
import { type RoleDetail, type RoleImpact, roleDetail, roleImpact } from './role-detail.js'
import {
  addMembers,
  memberNotEnded,
  putMember,
  type RoleMemberWindow,
  removeMember,
} from './role-members.js'
import { memberCounts, type Role, type RoleRow, requireRole, toRole } from './role-rows.js'

/** Body of `POST /roles`. */
export interface CreateRoleInput {
  name: string
  description?: string | null
  is_active?: boolean | null
  /** Row and rate limits for the members; null clears them (docs/roles-and-access.md#limits). */
  limits?: Limits | null
}

const fields = {
  name: identName,
  description: v.nullish(boundedString(0, 500)),
  is_active: v.nullish(v.boolean('expected a boolean')),
  /** Row and rate limits for the members (docs/roles-and-access.md#limits); null clears them. */
  limits: v.nullish(limitsSchema),
}
export const createRoleSchema = v.object(fields)
export const updateRoleSchema = v.partial(v.object(fields))
export const roleParentSchema = v.object({ parent_role_id: uuidString })

const snapshot = (r: RoleRow) => ({
  name: r.name,
  description: r.description,
  is_active: r.isActive,
  limits: storedLimits(r.limits),
})

/** Roles, membership and inheritance (docs/roles-and-access.md#roles). */
export class RolesService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Creates a role; 422 on a bad name, 409 already_exists. */
  async create(input: CreateRoleInput, actorId: string): Promise<Role> {
    const body = parseBody(createRoleSchema, input)
    const limits = normalizeLimits(body.limits ?? null)
    return this.#ctx.mutate(actorId, async (m) => {
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(roles)
            .values({
              id: uuidv7(),
              name: body.name,
              description: body.description ?? null,
              isActive: body.is_active ?? true,
              limits,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('role name already exists', 'name'),
      )
      const role = row as RoleRow
      m.audit('role', role.id, 'create', { after: snapshot(role) })
      return toRole(role, 0)
    })
  }

  /** Paginated roles, oldest first. */
  async list(input: PageInput & { search?: string | undefined } = {}): Promise<Page<Role>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const where = input.search
      ? ilike(roles.name, `%${input.search.replace(/[\\%_]/g, '\\$&')}%`)
      : undefined
    const db = this.#ctx.db
    const rows = await db
      .select()
      .from(roles)
      .where(where)
      .orderBy(asc(roles.createdAt), asc(roles.id))
      .limit(pageSize)
      .offset(offset)
    const [total] = await db.select({ n: count() }).from(roles).where(where)
    const counts = await memberCounts(
      db,
      rows.map((r) => r.id),
    )
    return {
      data: rows.map((r) => toRole(r, counts.get(r.id) ?? 0)),
      total: total?.n ?? 0,
      page,
      page_size: pageSize,
    }
  }

  /** Partial update; `members(R)` is invalidated when `is_active` or `name` changed. */
  async update(id: string, input: Partial<CreateRoleInput>, actorId: string): Promise<Role> {
    return this.#ctx.mutate(actorId, async (m) => {
      const [row] = await m.tx.select().from(roles).where(eq(roles.id, id)).for('update')
      if (!row) throw new ResourceNotFoundError('role')
      const body = parseBody(updateRoleSchema, input)
      for (const key of ['name', 'is_active'] as const) {
        if (input && (input as Record<string, unknown>)[key] === null) {
          throw new ValidationError([
            { field: key, code: 'invalid_type', message: `${key} cannot be null` },
          ])
        }
      }
      const next = {
        name: body.name ?? row.name,
        description: body.description === undefined ? row.description : body.description,
        is_active: body.is_active ?? row.isActive,
        limits: patchLimits(storedLimits(row.limits), body.limits),
      }
      const diff = diffFields(snapshot(row), next)
      const counts = await memberCounts(m.tx, [id])
      if (!diff) {
        m.noop()
        return toRole(row, counts.get(id) ?? 0)
      }
      const [updated] = await onUniqueViolation(
        () =>
          m.tx
            .update(roles)
            .set({
              name: next.name,
              description: next.description,
              isActive: next.is_active,
              limits: next.limits,
              updatedBy: actorId,
              updatedAt: m.now,
            })
            .where(eq(roles.id, id))
            .returning(),
        () => new ResourceConflictError('role name already exists', 'name'),
      )
      m.audit('role', id, 'update', diff)
      if ('name' in diff.after || 'is_active' in diff.after || 'limits' in diff.after) {
        m.invalidate({ type: 'user', userIds: await membersOf(m.tx, [id]) })
      }
      return toRole(updated as RoleRow, counts.get(id) ?? 0)
    })
  }

  /** Role detail with members, edges, and assignments/access reached through active ancestors. */
  async get(id: string): Promise<RoleDetail> {
    return roleDetail(this.#ctx.db, id)
  }

  /** Preview of a delete or deactivation. */
  async impact(id: string): Promise<RoleImpact> {
    return roleImpact(this.#ctx.db, id)
  }

  /** Deletes a role and every row referencing it; one `unassign` per cascaded assignment. */
  async delete(id: string, actorId: string): Promise<RoleImpact> {
    return this.#ctx.mutate(actorId, async (m) => {
      await lockRoleGraph(m.tx)
      const row = await requireRole(m.tx, id)
      const impact = await roleImpact(m.tx, id)
      const affected = await membersOf(m.tx, [id])
      const assignments = await m.tx
        .select()
        .from(policyAssignments)
        .where(and(eq(policyAssignments.scope, 'role'), eq(policyAssignments.roleId, id)))
      // Cascaded entries come first, then the role's own delete (docs/roles-and-access.md#roles).
      await removeAssignments(m, assignments, 'role_deleted')
      const memberRows = await m.tx
        .delete(roleMembers)
        .where(eq(roleMembers.roleId, id))
        .returning({ id: roleMembers.userId })
      const parentRows = await m.tx
        .delete(roleInheritance)
        .where(eq(roleInheritance.roleId, id))
        .returning({ id: roleInheritance.parentRoleId })
      const childRows = await m.tx
        .delete(roleInheritance)
        .where(eq(roleInheritance.parentRoleId, id))
        .returning({ id: roleInheritance.roleId })
      const accessRows = await m.tx
        .delete(datasourceAccess)
        .where(eq(datasourceAccess.roleId, id))
        .returning({ id: datasourceAccess.datasourceId })
      await m.tx.delete(roles).where(eq(roles.id, id))
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort()
      m.audit('role', id, 'delete', {
        before: {
          ...snapshot(row),
          member_user_ids: ids(memberRows),
          parent_role_ids: ids(parentRows),
          child_role_ids: ids(childRows),
          datasource_ids: ids(accessRows),
        },
      })
      m.invalidate({ type: 'user', userIds: affected })
      return impact
    })
  }

  /** Users reachable through inheritance, each with the role they are directly in. */
  /** The roles a user is a direct member of, sorted by name (404 for an unknown user). */
  async ofUser(
    userId: string,
  ): Promise<({ id: string; name: string; is_active: boolean } & RoleMemberWindow)[]> {
    const db = this.#ctx.db
    const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId))
    if (!user) throw new ResourceNotFoundError('user')
    const rows = await db
      .select({
        id: roles.id,
        name: roles.name,
        is_active: roles.isActive,
        validFrom: roleMembers.validFrom,
        validUntil: roleMembers.validUntil,
      })
      .from(roleMembers)
      .innerJoin(roles, eq(roles.id, roleMembers.roleId))
      .where(and(eq(roleMembers.userId, userId), memberNotEnded))
      .orderBy(asc(roles.name))
    return rows.map(({ validFrom, validUntil, ...r }) => ({
      ...r,
      ...windowIfSet({ validFrom, validUntil }),
    }))
  }

  async effectiveMembers(id: string): Promise<EffectiveMember[]> {
    await requireRole(this.#ctx.db, id)
    return effectiveMembers(this.#ctx.db, id)
  }

  /** Adds direct members, all or nothing, optionally for a window (docs/roles-and-access.md#roles). */
  async addMembers(
    id: string,
    input: { user_ids: string[]; valid_from?: string | null; valid_until?: string | null },
    actorId: string,
  ): Promise<void> {
    await addMembers(this.#ctx, id, input, actorId)
  }

  /** Creates or re-windows one membership (docs/policies.md "Time-bound access"). */
  async putMember(
    id: string,
    userId: string,
    input: { valid_from?: string | null; valid_until?: string | null },
    actorId: string,
  ): Promise<void> {
    await putMember(this.#ctx, id, userId, input, actorId)
  }

  /** Removes one direct member; 404 when the role is unknown or the user is not a member. */
  async removeMember(id: string, userId: string, actorId: string): Promise<void> {
    await removeMember(this.#ctx, id, userId, actorId)
  }

  /**
   * Adds an inheritance edge (docs/roles-and-access.md#roles). Cycle and depth checks and the insert run in one
   * transaction under the role-graph lock, so concurrent requests cannot build a cycle together.
   */
  async addParent(id: string, input: { parent_role_id: string }, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireRole(m.tx, id)
      const parentId = parseBody(roleParentSchema, input).parent_role_id
      await requireRole(m.tx, parentId).catch(() => {
        throw new ResourceNotFoundError('parent role', 'parent_role_id')
      })
      await lockRoleGraph(m.tx)
      const edges = await loadEdges(m.tx)
      if (parentId === id || reachable(parentId, id, edges.parents)) {
        throw new StoreError('role_cycle', 'the parent role would create a cycle', [
          { field: 'parent_role_id', code: 'not_allowed', message: 'would create a cycle' },
        ])
      }
      if ((edges.parents.get(id) ?? []).includes(parentId)) {
        throw new ResourceConflictError('the role already has this parent', 'parent_role_id')
      }
      const total = longestChain(parentId, edges.parents) + 1 + longestChain(id, edges.children)
      if (total > MAX_ROLE_DEPTH) {
        throw new StoreError(
          'role_depth_exceeded',
          `the inheritance chain would be ${total} deep; the limit is ${MAX_ROLE_DEPTH}`,
          [{ field: 'parent_role_id', code: 'out_of_range', message: 'chain too deep' }],
        )
      }
      await m.tx
        .insert(roleInheritance)
        .values({ roleId: id, parentRoleId: parentId, createdAt: m.now })
      m.audit('role_inheritance', id, 'add_parent', { role_id: id, parent_role_id: parentId })
      m.invalidate({ type: 'user', userIds: await membersOf(m.tx, [id]) })
    })
  }

  /** Removes an inheritance edge; 404 when the role or the edge is unknown. */
  async removeParent(id: string, parentId: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireRole(m.tx, id)
      await lockRoleGraph(m.tx)
      const removed = await m.tx
        .delete(roleInheritance)
        .where(and(eq(roleInheritance.roleId, id), eq(roleInheritance.parentRoleId, parentId)))
        .returning()
      if (removed.length === 0) throw new ResourceNotFoundError('parent edge')
      m.audit('role_inheritance', id, 'remove_parent', { role_id: id, parent_role_id: parentId })
      m.invalidate({ type: 'user', userIds: await membersOf(m.tx, [id]) })
    })
  }
}
