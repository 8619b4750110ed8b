import { and, eq } from 'drizzle-orm'
import * as v from 'valibot'
import { isoNow, type StoreContext } from '../kernel/context.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import { ResourceConflictError, ResourceNotFoundError, ValidationError } from '../kernel/errors.js'
import { boundedString, parseBody, uuidString } from '../kernel/validation.js'
import { identityProviders, userIdentities, users } from '../tables.js'

/** Which provider subject a user is (docs/sso.md#linking-users-ahead-of-their-first-login). */
export interface UserIdentity {
  identity_provider_id: string
  subject: string
  /** The provider's admin claim made this user an admin (console sign-in). */
  admin_granted: boolean
  created_at: string
}

/** Body of `PUT /users/{id}/identity`. */
export const linkUserIdentitySchema = v.object({
  identity_provider_id: uuidString,
  subject: boundedString(1, 255),
})

/** What `PUT /users/{id}/identity` accepts. */
export type LinkUserIdentityInput = v.InferInput<typeof linkUserIdentitySchema>

type LinkRow = typeof userIdentities.$inferSelect

function toIdentity(row: LinkRow): UserIdentity {
  return {
    identity_provider_id: row.identityProviderId,
    subject: row.subject,
    admin_granted: row.adminGranted,
    created_at: isoNow(row.createdAt),
  }
}

async function requireUser(db: Db, id: string): Promise<void> {
  const [row] = await db.select({ id: users.id }).from(users).where(eq(users.id, id))
  if (!row) throw new ResourceNotFoundError('user')
}

/**
 * Links between users and provider subjects set by an admin: ahead of a user's first token login
 * or console sign-in, so that only that subject can log in as them (and a user whose name the
 * provider spells differently is still found). Every change is audited as a `user` `update`.
 */
export class UserIdentityLinks {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** The user's link; 404 when the user is unknown or not linked. */
  async get(userId: string): Promise<UserIdentity> {
    await requireUser(this.#ctx.db, userId)
    const [row] = await this.#ctx.db
      .select()
      .from(userIdentities)
      .where(eq(userIdentities.userId, userId))
    if (!row) throw new ResourceNotFoundError('identity link')
    return toIdentity(row)
  }

  /** Links (or relinks) a user; 422 for an unknown provider, 409 for a subject linked elsewhere. */
  async link(userId: string, input: LinkUserIdentityInput, actorId: string): Promise<UserIdentity> {
    const body = parseBody(linkUserIdentitySchema, input)
    return this.#ctx.mutate(actorId, async (m) => {
      await requireUser(m.tx, userId)
      const [provider] = await m.tx
        .select({ id: identityProviders.id })
        .from(identityProviders)
        .where(eq(identityProviders.id, body.identity_provider_id))
      if (!provider) {
        throw new ValidationError([
          {
            field: 'identity_provider_id',
            code: 'not_found',
            message: 'no such identity provider',
          },
        ])
      }
      const [before] = await m.tx
        .select()
        .from(userIdentities)
        .where(eq(userIdentities.userId, userId))
        .for('update')
      const same =
        before?.identityProviderId === body.identity_provider_id && before.subject === body.subject
      if (before && same) {
        m.noop()
        return toIdentity(before)
      }
      const [taken] = await m.tx
        .select({ userId: userIdentities.userId })
        .from(userIdentities)
        .where(
          and(
            eq(userIdentities.identityProviderId, body.identity_provider_id),
            eq(userIdentities.subject, body.subject),
          ),
        )
      if (taken) throw new ResourceConflictError('that subject is linked to another user')
      if (before) await m.tx.delete(userIdentities).where(eq(userIdentities.userId, userId))
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(userIdentities)
            .values({
              userId,
              identityProviderId: body.identity_provider_id,
              subject: body.subject,
              createdAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('that subject is linked to another user'),
      )
      m.audit('user', userId, 'update', {
        before: { identity: before ? linkOf(before) : null },
        after: { identity: linkOf(row as LinkRow) },
      })
      return toIdentity(row as LinkRow)
    })
  }

  /** Removes the user's link; 404 when there is none. */
  async unlink(userId: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireUser(m.tx, userId)
      const [removed] = await m.tx
        .delete(userIdentities)
        .where(eq(userIdentities.userId, userId))
        .returning()
      if (!removed) throw new ResourceNotFoundError('identity link')
      m.audit('user', userId, 'update', {
        before: { identity: linkOf(removed) },
        after: { identity: null },
      })
    })
  }
}

function linkOf(row: LinkRow) {
  return { identity_provider_id: row.identityProviderId, subject: row.subject }
}
