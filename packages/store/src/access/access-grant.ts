import { and, eq, type SQL } from 'drizzle-orm'
import type { ChangeEvent } from '../kernel/change-feed.js'
import type { Db } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { membersOf } from '../kernel/role-graph.js'
import { datasourceAccess } from '../tables.js'
import { type GrantWindow, sameWindow, windowJson } from './grant-window.js'

/** A user or role that can hold a datasource access row. */
export interface AccessSubject {
  scope: 'user' | 'role'
  id: string
}

/** The rows of one scope on a datasource (`all`: the one everyone row). */
export function scopeRows(datasourceId: string, scope: 'user' | 'role' | 'all'): SQL | undefined {
  return and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, scope))
}

/** The row of `subject` on a datasource. */
export function subjectRow(datasourceId: string, subject: AccessSubject): SQL | undefined {
  return and(
    scopeRows(datasourceId, subject.scope),
    subject.scope === 'user'
      ? eq(datasourceAccess.userId, subject.id)
      : eq(datasourceAccess.roleId, subject.id),
  )
}

/** The sessions one subject's access change reaches (docs/roles-and-access.md#datasource-access). */
export async function accessEvent(
  db: Db,
  datasourceId: string,
  subject: AccessSubject,
): Promise<ChangeEvent> {
  const userIds = subject.scope === 'user' ? [subject.id] : await membersOf(db, [subject.id])
  return { type: 'ds_users', datasourceId, userIds }
}

/**
 * Gives `subject` access to a datasource for exactly `window`, creating or re-windowing its row
 * (audited as data_source_access/grant_access with the window); false when it already held it.
 */
export async function grantAccess(
  m: Mutation,
  datasourceId: string,
  subject: AccessSubject,
  window: GrantWindow,
): Promise<boolean> {
  const [current] = await m.tx
    .select()
    .from(datasourceAccess)
    .where(subjectRow(datasourceId, subject))
  if (current && sameWindow(current, window)) return false
  if (current) {
    await m.tx.update(datasourceAccess).set(window).where(eq(datasourceAccess.id, current.id))
  } else {
    await m.tx.insert(datasourceAccess).values({
      id: uuidv7(),
      datasourceId,
      scope: subject.scope,
      userId: subject.scope === 'user' ? subject.id : null,
      roleId: subject.scope === 'role' ? subject.id : null,
      ...window,
      createdAt: m.now,
    })
  }
  m.audit('data_source_access', datasourceId, 'grant_access', {
    datasource_id: datasourceId,
    scope: subject.scope,
    [`${subject.scope}_id`]: subject.id,
    ...windowJson(window),
  })
  m.invalidate(await accessEvent(m.tx, datasourceId, subject))
  return true
}
