import { and, eq } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { ResourceNotFoundError, StoreError, ValidationError } from '../kernel/errors.js'
import type { Mutation } from '../kernel/mutation.js'
import { grantMembership } from '../roles/role-members.js'
import { datasourceAccess, datasources, roleMembers, roles } from '../tables.js'
import { grantAccess } from './access-grant.js'
import type { GrantWindow } from './grant-window.js'

/** What an access request asks for. */
export type Target = { kind: 'role' | 'datasource'; id: string }

/** Exactly one of a role (which must be active) or a datasource (which must be active). */
export async function checkTarget(
  db: Db,
  roleId: string | null,
  dsId: string | null,
): Promise<Target> {
  if ((roleId === null) === (dsId === null)) {
    throw new ValidationError([
      {
        field: 'role_id',
        code: 'required',
        message: 'give exactly one of role_id and datasource_id',
      },
    ])
  }
  if (roleId !== null) {
    const [role] = await db.select().from(roles).where(eq(roles.id, roleId))
    if (!role) throw new ResourceNotFoundError('role', 'role_id')
    if (!role.isActive) throw new StoreError('inactive_role', `role ${role.name} is inactive`)
    return { kind: 'role', id: roleId }
  }
  const [ds] = await db
    .select()
    .from(datasources)
    .where(eq(datasources.id, dsId as string))
  if (!ds?.isActive) throw new ResourceNotFoundError('datasource', 'datasource_id')
  return { kind: 'datasource', id: ds.id }
}

/**
 * Creates or extends the grant ending at `until`; a grant that already lasts at least as long
 * (or for good) and has started is kept. Returns when the user's grant now ends (null: never).
 */
export async function grantFor(
  m: Mutation,
  userId: string,
  target: Target,
  until: Date,
): Promise<Date | null> {
  const [current] =
    target.kind === 'role'
      ? await m.tx
          .select({ validFrom: roleMembers.validFrom, validUntil: roleMembers.validUntil })
          .from(roleMembers)
          .where(and(eq(roleMembers.roleId, target.id), eq(roleMembers.userId, userId)))
      : await m.tx
          .select({
            validFrom: datasourceAccess.validFrom,
            validUntil: datasourceAccess.validUntil,
          })
          .from(datasourceAccess)
          .where(
            and(
              eq(datasourceAccess.datasourceId, target.id),
              eq(datasourceAccess.scope, 'user'),
              eq(datasourceAccess.userId, userId),
            ),
          )
  const started = !current?.validFrom || current.validFrom <= m.now
  if (current && started && (current.validUntil === null || current.validUntil >= until)) {
    return current.validUntil
  }
  const window: GrantWindow = { validFrom: null, validUntil: until }
  if (target.kind === 'role') await grantMembership(m, target.id, userId, window)
  else await grantAccess(m, target.id, { scope: 'user', id: userId }, window)
  return until
}
