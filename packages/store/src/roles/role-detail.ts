// A role as its detail page shows it, and what deleting or deactivating it touches.
import { and, asc, count, eq, inArray } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { effectiveMembers, loadEdges, MAX_ROLE_DEPTH, membersOf } from '../kernel/role-graph.js'
import {
  datasourceAccess,
  datasources,
  policies,
  policyAssignments,
  roleInheritance,
  roles,
} from '../tables.js'
import { listMembers, type RoleMemberWindow } from './role-members.js'
import { type Role, requireRole, toRole } from './role-rows.js'

/** `GET /roles/{id}` (docs/roles-and-access.md#roles). */
export interface RoleDetail extends Role {
  effective_member_count: number
  /** Direct members; `valid_from`/`valid_until` bound a time-bound membership (else null). */
  members: ({ id: string; username: string } & RoleMemberWindow)[]
  parent_roles: { id: string; name: string; is_active: boolean }[]
  child_roles: { id: string; name: string; is_active: boolean }[]
  policy_assignments: {
    assignment_id: string
    policy_id: string
    policy_name: string
    datasource_id: string
    datasource_name: string
    priority: number
    source: string
  }[]
  datasource_access: { datasource_id: string; datasource_name: string; source: string }[]
}

/** What deleting or deactivating a role touches (docs/roles-and-access.md#roles). */
export interface RoleImpact {
  role_id: string
  affected_users: number
  affected_assignments: number
  affected_datasource_access: number
  affected_child_roles: number
}

/** Role detail with members, edges, and assignments/access reached through active ancestors. */
export async function roleDetail(db: Db, id: string): Promise<RoleDetail> {
  const row = await requireRole(db, id)
  const members = await listMembers(db, id)
  const edgeRole = { id: roles.id, name: roles.name, is_active: roles.isActive }
  const parentRoles = await db
    .select(edgeRole)
    .from(roleInheritance)
    .innerJoin(roles, eq(roles.id, roleInheritance.parentRoleId))
    .where(eq(roleInheritance.roleId, id))
    .orderBy(asc(roles.name))
  const childRoles = await db
    .select(edgeRole)
    .from(roleInheritance)
    .innerJoin(roles, eq(roles.id, roleInheritance.roleId))
    .where(eq(roleInheritance.parentRoleId, id))
    .orderBy(asc(roles.name))
  // Ancestors through active roles only, nearest first; R itself is "direct".
  const edges = await loadEdges(db)
  const allRoles = new Map((await db.select().from(roles)).map((r) => [r.id, r]))
  const source = new Map<string, string>([[id, 'direct']])
  let frontier = [id]
  for (let depth = 0; depth < MAX_ROLE_DEPTH && frontier.length > 0; depth++) {
    const next: string[] = []
    for (const r of frontier) {
      for (const p of edges.parents.get(r) ?? []) {
        const parent = allRoles.get(p)
        if (!parent?.isActive || source.has(p)) continue
        source.set(p, `inherited from '${parent.name}'`)
        next.push(p)
      }
    }
    frontier = next
  }
  const reached = [...source.keys()]
  const assignments = await db
    .select({
      assignment_id: policyAssignments.id,
      policy_id: policyAssignments.policyId,
      policy_name: policies.name,
      datasource_id: policyAssignments.datasourceId,
      datasource_name: datasources.name,
      priority: policyAssignments.priority,
      role_id: policyAssignments.roleId,
    })
    .from(policyAssignments)
    .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
    .innerJoin(datasources, eq(datasources.id, policyAssignments.datasourceId))
    .where(and(eq(policyAssignments.scope, 'role'), inArray(policyAssignments.roleId, reached)))
    .orderBy(asc(policyAssignments.priority), asc(policyAssignments.createdAt))
  const access = await db
    .select({
      datasource_id: datasourceAccess.datasourceId,
      datasource_name: datasources.name,
      role_id: datasourceAccess.roleId,
    })
    .from(datasourceAccess)
    .innerJoin(datasources, eq(datasources.id, datasourceAccess.datasourceId))
    .where(and(eq(datasourceAccess.scope, 'role'), inArray(datasourceAccess.roleId, reached)))
    .orderBy(asc(datasources.name))
  const effective = await effectiveMembers(db, id)
  return {
    ...toRole(row, members.length),
    effective_member_count: effective.length,
    members,
    parent_roles: parentRoles,
    child_roles: childRoles,
    policy_assignments: assignments.map(({ role_id, ...a }) => ({
      ...a,
      source: source.get(role_id ?? '') ?? 'direct',
    })),
    datasource_access: access.map(({ role_id, ...a }) => ({
      ...a,
      source: source.get(role_id ?? '') ?? 'direct',
    })),
  }
}

/** What deleting or deactivating a role touches. */
export async function roleImpact(db: Db, id: string): Promise<RoleImpact> {
  await requireRole(db, id)
  const [a] = await db
    .select({ n: count() })
    .from(policyAssignments)
    .where(and(eq(policyAssignments.scope, 'role'), eq(policyAssignments.roleId, id)))
  const [d] = await db
    .select({ n: count() })
    .from(datasourceAccess)
    .where(and(eq(datasourceAccess.scope, 'role'), eq(datasourceAccess.roleId, id)))
  const [c] = await db
    .select({ n: count() })
    .from(roleInheritance)
    .where(eq(roleInheritance.parentRoleId, id))
  return {
    role_id: id,
    affected_users: (await membersOf(db, [id])).length,
    affected_assignments: a?.n ?? 0,
    affected_datasource_access: d?.n ?? 0,
    affected_child_roles: c?.n ?? 0,
  }
}
