import { inArray } from 'drizzle-orm'
import type { ChangeEvent } from '../kernel/change-feed.js'
import type { Db } from '../kernel/db.js'
import type { Mutation } from '../kernel/mutation.js'
import { membersOf } from '../kernel/role-graph.js'
import { policyAssignments } from '../tables.js'

type AssignmentRow = typeof policyAssignments.$inferSelect

/** Why an assignment disappeared along with another resource (docs/audit.md#admin-audit). */
export type CascadeReason =
  | 'role_deleted'
  | 'user_deleted'
  | 'datasource_deleted'
  | 'policy_deleted'
  | 'expired'

/** The flat `assign`/`unassign` audit shape (docs/audit.md#admin-audit). */
export function assignmentChanges(row: AssignmentRow, reason?: CascadeReason) {
  return {
    assignment_id: row.id,
    policy_id: row.policyId,
    datasource_id: row.datasourceId,
    scope: row.scope,
    user_id: row.userId,
    role_id: row.roleId,
    priority: row.priority,
    ...(row.validFrom ? { valid_from: row.validFrom.toISOString() } : {}),
    ...(row.validUntil ? { valid_until: row.validUntil.toISOString() } : {}),
    ...(reason ? { reason } : {}),
  }
}

/** Sessions an assignment affects (docs/roles-and-access.md#policy-assignments): all → ds(D), user → ds(D,U), role → members. */
export async function assignmentEvent(db: Db, row: AssignmentRow): Promise<ChangeEvent> {
  if (row.scope === 'user' && row.userId) {
    return { type: 'ds_users', datasourceId: row.datasourceId, userIds: [row.userId] }
  }
  if (row.scope === 'role' && row.roleId) {
    const userIds = await membersOf(db, [row.roleId])
    return { type: 'ds_users', datasourceId: row.datasourceId, userIds }
  }
  return { type: 'ds', datasourceId: row.datasourceId }
}

/** Deletes assignments with one `unassign` entry each; `reason` marks a cascade. */
export async function removeAssignments(
  m: Mutation,
  rows: readonly AssignmentRow[],
  reason?: CascadeReason,
): Promise<void> {
  if (rows.length === 0) return
  for (const row of rows) {
    m.invalidate(await assignmentEvent(m.tx, row))
    m.audit('policy_assignment', row.id, 'unassign', assignmentChanges(row, reason))
  }
  await m.tx.delete(policyAssignments).where(
    inArray(
      policyAssignments.id,
      rows.map((r) => r.id),
    ),
  )
}
