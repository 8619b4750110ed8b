import { sql } from 'drizzle-orm'
import { activeNow } from '../access/grant-window.js'
import { roleInheritance } from '../tables.js'
import { type Db, rowsOf } from './db.js'

/** Maximum inheritance depth (docs/resources.md#limits). */
export const MAX_ROLE_DEPTH = 10

/** Advisory lock key of the store-wide role-graph lock (docs/roles-and-access.md#roles). */
const ROLE_GRAPH_LOCK = 0x5a11_0001

/** Takes the transaction-scoped role-graph lock; concurrent add_parent calls serialize on it. */
export async function lockRoleGraph(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${ROLE_GRAPH_LOCK})`)
}

/** Parent and child adjacency of the whole inheritance graph (small: roles are admin objects). */
export interface RoleEdges {
  parents: Map<string, string[]>
  children: Map<string, string[]>
}

/** Loads every inheritance edge. */
export async function loadEdges(db: Db): Promise<RoleEdges> {
  const rows = await db.select().from(roleInheritance)
  const parents = new Map<string, string[]>()
  const children = new Map<string, string[]>()
  for (const { roleId, parentRoleId } of rows) {
    parents.set(roleId, [...(parents.get(roleId) ?? []), parentRoleId])
    children.set(parentRoleId, [...(children.get(parentRoleId) ?? []), roleId])
  }
  return { parents, children }
}

/** Longest chain of edges from `start` following `next` (0 when it has none). */
export function longestChain(start: string, next: Map<string, string[]>): number {
  const memo = new Map<string, number>()
  const visit = (id: string, guard: number): number => {
    const known = memo.get(id)
    if (known !== undefined) return known
    // The guard stops a walk on a corrupted (cyclic) graph instead of recursing forever.
    if (guard > 4 * MAX_ROLE_DEPTH) return guard
    let best = 0
    for (const n of next.get(id) ?? []) best = Math.max(best, 1 + visit(n, guard + 1))
    memo.set(id, best)
    return best
  }
  return visit(start, 0)
}

/** True when `target` is reachable from `start` following `next`. */
export function reachable(start: string, target: string, next: Map<string, string[]>): boolean {
  const seen = new Set<string>()
  const queue = [start]
  while (queue.length > 0) {
    const id = queue.shift() as string
    if (id === target) return true
    if (seen.has(id)) continue
    seen.add(id)
    queue.push(...(next.get(id) ?? []))
  }
  return false
}

/** A resolved role: its id, name and the number of edges above a direct role. */
export interface ResolvedRole {
  id: string
  name: string
  depth: number
}

/**
 * The user's roles (docs/roles-and-access.md#roles): breadth-first upward from direct roles, only through active
 * roles, at most 10 edges above a direct role. One recursive query.
 */
export async function resolveUserRoles(db: Db, userId: string): Promise<ResolvedRole[]> {
  const rows = await rowsOf<{ id: string; name: string; depth: number }>(
    db.execute(sql`
      WITH RECURSIVE walk(id, depth) AS (
        SELECT r.id, 0 FROM role_members m JOIN roles r ON r.id = m.role_id AND r.is_active
        WHERE m.user_id = ${userId} AND ${activeNow('m')}
        UNION
        SELECT p.id, w.depth + 1 FROM walk w
        JOIN role_inheritance e ON e.role_id = w.id
        JOIN roles p ON p.id = e.parent_role_id AND p.is_active
        WHERE w.depth < ${MAX_ROLE_DEPTH}
      )
      SELECT r.id, r.name, min(w.depth)::int AS depth FROM walk w JOIN roles r ON r.id = w.id
      GROUP BY r.id, r.name ORDER BY min(w.depth), r.name`),
  )
  return rows.map((r) => ({ id: r.id, name: r.name, depth: Number(r.depth) }))
}

/**
 * `members(R)` of docs/roles-and-access.md#changes-apply-live: users directly in R or in any role below R, active or not.
 */
export async function membersOf(db: Db, roleIds: readonly string[]): Promise<string[]> {
  if (roleIds.length === 0) return []
  const ids = sql.join(
    roleIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  )
  const rows = await rowsOf<{ user_id: string }>(
    db.execute(sql`
      WITH RECURSIVE down(id, depth) AS (
        SELECT r.id, 0 FROM roles r WHERE r.id IN (${ids})
        UNION
        SELECT e.role_id, d.depth + 1 FROM down d JOIN role_inheritance e ON e.parent_role_id = d.id
        WHERE d.depth < ${MAX_ROLE_DEPTH * 2}
      )
      SELECT DISTINCT m.user_id FROM down d JOIN role_members m ON m.role_id = d.id
      ORDER BY m.user_id`),
  )
  return rows.map((r) => r.user_id)
}

/** One effective member of a role (docs/roles-and-access.md#roles). */
export interface EffectiveMember {
  user_id: string
  username: string
  direct_role_id: string
  direct_role_name: string
  source: string
}

/**
 * Users who are members of R or of a role below R, walking down through active roles only
 * (R's own state does not matter), at most 10 levels; each with the role they are directly in.
 */
export async function effectiveMembers(db: Db, roleId: string): Promise<EffectiveMember[]> {
  const rows = await rowsOf<{
    user_id: string
    username: string
    role_id: string
    role_name: string
    depth: number
  }>(
    db.execute(sql`
      WITH RECURSIVE down(id, depth) AS (
        SELECT ${roleId}::uuid, 0
        UNION
        SELECT e.role_id, d.depth + 1 FROM down d
        JOIN role_inheritance e ON e.parent_role_id = d.id
        JOIN roles c ON c.id = e.role_id AND c.is_active
        WHERE d.depth < ${MAX_ROLE_DEPTH}
      ), nearest AS (SELECT id, min(depth)::int AS depth FROM down GROUP BY id)
      SELECT u.id AS user_id, u.username, r.id AS role_id, r.name AS role_name, n.depth
      FROM nearest n JOIN role_members m ON m.role_id = n.id AND ${activeNow('m')}
      JOIN users u ON u.id = m.user_id JOIN roles r ON r.id = n.id
      ORDER BY u.username, n.depth, r.name`),
  )
  const seen = new Set<string>()
  const out: EffectiveMember[] = []
  for (const r of rows) {
    if (seen.has(r.user_id)) continue
    seen.add(r.user_id)
    out.push({
      user_id: r.user_id,
      username: r.username,
      direct_role_id: r.role_id,
      direct_role_name: r.role_name,
      source: r.role_id === roleId ? 'direct' : `via role '${r.role_name}'`,
    })
  }
  return out
}
