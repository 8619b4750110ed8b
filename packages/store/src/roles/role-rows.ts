// Role rows as the admin API shows them, and the lookups every role operation starts with.
import { count, eq, inArray } from 'drizzle-orm'
import { isoNow } from '../kernel/context.js'
import type { Db } from '../kernel/db.js'
import { ResourceNotFoundError } from '../kernel/errors.js'
import { type Limits, storedLimits } from '../kernel/limits.js'
import { roleMembers, roles } from '../tables.js'

/** A role as listed (docs/roles-and-access.md#roles). */
export interface Role {
  id: string
  name: string
  description: string | null
  is_active: boolean
  /** The role's limits, for its members and those of the roles below it; null: none. */
  limits: Limits | null
  direct_member_count: number
  created_at: string
  updated_at: string
}

export type RoleRow = typeof roles.$inferSelect

export async function requireRole(db: Db, id: string): Promise<RoleRow> {
  const [row] = await db.select().from(roles).where(eq(roles.id, id))
  if (!row) throw new ResourceNotFoundError('role')
  return row
}

export async function memberCounts(db: Db, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .select({ id: roleMembers.roleId, n: count() })
    .from(roleMembers)
    .where(inArray(roleMembers.roleId, ids))
    .groupBy(roleMembers.roleId)
  return new Map(rows.map((r) => [r.id, r.n]))
}

export function toRole(row: RoleRow, members: number): Role {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    is_active: row.isActive,
    limits: storedLimits(row.limits),
    direct_member_count: members,
    created_at: isoNow(row.createdAt),
    updated_at: isoNow(row.updatedAt),
  }
}
