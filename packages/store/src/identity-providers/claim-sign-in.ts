import { and, eq, inArray } from 'drizzle-orm'
import * as v from 'valibot'
import { SYSTEM_ACTOR_ID } from '../access/grant-expiry.js'
import { coerceValue } from '../attributes/attribute-values.js'
import type { StoreContext } from '../kernel/context.js'
import type { Mutation } from '../kernel/mutation.js'
import { identName } from '../kernel/validation.js'
import { attributeDefinitions, roleMembers, roles, userIdentities, users } from '../tables.js'
import { attributeInput, claimAt, claimValues, stringClaim, usernameOf } from './claim-values.js'
import type { IdentityProvider } from './identity-providers-service.js'
import {
  type ClaimsOutcome,
  createProviderUser,
  SignInRefused,
  syncSignIn,
} from './provider-user-sync.js'

/** Why a verified token still does not log its user in (login audit only, never the client). */
export type ClaimRefusal =
  | 'missing_username_claim'
  | 'username_mismatch'
  | 'missing_subject'
  | 'unknown_user'
  | 'inactive_user'
  | 'invalid_username'
  | 'identity_mismatch'
  | 'invalid_claim'

/** The outcome of signing in with verified claims. */
export type ClaimSignIn = ClaimsOutcome<ClaimRefusal>

const Refused = SignInRefused<ClaimRefusal>

/**
 * Finds or provisions the user a verified token names and brings their mapped attributes and
 * claim-granted roles up to date (docs/sso.md), in one audited transaction whose actor is the
 * system: a new user is `user`/`create`, changed attributes `user`/`update`, roles
 * `role_member`/`add_member` and `remove_member`. Nothing changed: nothing is written.
 */
export async function signInWithClaims(
  ctx: StoreContext,
  provider: IdentityProvider,
  requestedUsername: string,
  claims: Readonly<Record<string, unknown>>,
): Promise<ClaimSignIn> {
  const username = usernameOf(claims, provider.username_claim)
  if (!username) return { userId: null, refusal: 'missing_username_claim' }
  if (username !== requestedUsername) return { userId: null, refusal: 'username_mismatch' }
  const subject = stringClaim(claims, 'sub')
  if (!subject || subject.length > 255) return { userId: null, refusal: 'missing_subject' }
  return syncSignIn<ClaimRefusal>(ctx, async (m) => ({
    userId: await syncUser(m, provider, username, subject, claims),
    refusal: null,
  }))
}

async function syncUser(
  m: Mutation,
  provider: IdentityProvider,
  username: string,
  subject: string,
  claims: Readonly<Record<string, unknown>>,
): Promise<string> {
  const [row] = await m.tx.select().from(users).where(eq(users.username, username)).for('update')
  const attributes = await mappedAttributes(m, provider, claims)
  let userId: string
  let before: Record<string, unknown>
  if (!row) {
    if (!provider.jit_users) throw new Refused('unknown_user')
    if (!v.is(identName, username)) throw new Refused('invalid_username')
    userId = await createProviderUser(m, provider, username, subject, false)
    before = {}
  } else {
    if (!row.isActive) throw new Refused('inactive_user')
    userId = row.id
    await linkIdentity(m, provider, row, subject)
    before = row.attributes
  }
  const next = { ...before }
  for (const [key, value] of attributes) {
    if (value === undefined) delete next[key]
    else next[key] = value
  }
  if (JSON.stringify(next) !== JSON.stringify(before)) {
    await m.tx
      .update(users)
      .set({ attributes: next, updatedBy: SYSTEM_ACTOR_ID, updatedAt: m.now })
      .where(eq(users.id, userId))
    m.audit('user', userId, 'update', {
      before: { attributes: before },
      after: { attributes: next },
      identity_provider_id: provider.id,
    })
    m.invalidate({ type: 'user', userIds: [userId] })
  }
  await syncRoles(m, provider, userId, claims)
  if (m.entries.length === 0) m.noop()
  return userId
}

/** Links an existing user to the provider's subject at its first token login, or checks the link. */
async function linkIdentity(
  m: Mutation,
  provider: IdentityProvider,
  row: typeof users.$inferSelect,
  subject: string,
): Promise<void> {
  const [link] = await m.tx.select().from(userIdentities).where(eq(userIdentities.userId, row.id))
  if (link) {
    if (link.identityProviderId !== provider.id || link.subject !== subject) {
      throw new Refused('identity_mismatch')
    }
    return
  }
  // An admin account is never taken over by a token naming it (docs/sso.md).
  if (row.isAdmin) throw new Refused('identity_mismatch')
  const [other] = await m.tx
    .select()
    .from(userIdentities)
    .where(
      and(eq(userIdentities.identityProviderId, provider.id), eq(userIdentities.subject, subject)),
    )
  if (other) throw new Refused('identity_mismatch')
  await m.tx
    .insert(userIdentities)
    .values({ userId: row.id, identityProviderId: provider.id, subject, createdAt: m.now })
  m.audit('user', row.id, 'update', {
    before: { identity_provider_id: null },
    after: { identity_provider_id: provider.id },
  })
}

/**
 * The mapped attributes' new values (undefined: the claim is absent, so the attribute goes).
 * A claim that does not fit its definition refuses the login: a tenant must never be guessed.
 */
async function mappedAttributes(
  m: Mutation,
  provider: IdentityProvider,
  claims: Readonly<Record<string, unknown>>,
): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>()
  if (provider.attribute_mappings.length === 0) return out
  const defs = await m.tx
    .select()
    .from(attributeDefinitions)
    .where(eq(attributeDefinitions.entityType, 'user'))
  const rules = new Map(defs.map((d) => [d.key, d]))
  for (const mapping of provider.attribute_mappings) {
    const def = rules.get(mapping.attribute)
    if (!def) continue // Definition deleted since the provider was saved.
    const raw = claimAt(claims, mapping.claim)
    if (raw === undefined || raw === null) {
      out.set(mapping.attribute, undefined)
      continue
    }
    const result = coerceValue(
      { valueType: def.valueType, allowedValues: def.allowedValues ?? null },
      attributeInput(raw, def.valueType),
    )
    if (!result.ok) throw new Refused('invalid_claim')
    out.set(mapping.attribute, result.value)
  }
  return out
}

/** Makes the user's provider-granted memberships match the role claim's mapped values. */
async function syncRoles(
  m: Mutation,
  provider: IdentityProvider,
  userId: string,
  claims: Readonly<Record<string, unknown>>,
): Promise<void> {
  const values = claimValues(claims, provider.role_claim)
  const mapped = [
    ...new Set(provider.role_mappings.filter((r) => values.has(r.value)).map((r) => r.role_id)),
  ]
  // A mapped role deleted since the provider was saved is skipped.
  const wanted = new Set(
    mapped.length === 0
      ? []
      : (await m.tx.select({ id: roles.id }).from(roles).where(inArray(roles.id, mapped))).map(
          (r) => r.id,
        ),
  )
  const current = await m.tx.select().from(roleMembers).where(eq(roleMembers.userId, userId))
  const held = new Set(current.map((r) => r.roleId))
  const changed: string[] = []
  for (const membership of current) {
    if (membership.identityProviderId !== provider.id || wanted.has(membership.roleId)) continue
    await m.tx
      .delete(roleMembers)
      .where(and(eq(roleMembers.roleId, membership.roleId), eq(roleMembers.userId, userId)))
    m.audit('role_member', membership.roleId, 'remove_member', {
      user_id: userId,
      role_id: membership.roleId,
      identity_provider_id: provider.id,
    })
    changed.push(membership.roleId)
  }
  for (const roleId of wanted) {
    // A membership an admin granted stays theirs.
    if (held.has(roleId)) continue
    const inserted = await m.tx
      .insert(roleMembers)
      .values({ roleId, userId, identityProviderId: provider.id, createdAt: m.now })
      .onConflictDoNothing()
      .returning({ roleId: roleMembers.roleId })
    if (inserted.length === 0) continue
    m.audit('role_member', roleId, 'add_member', {
      user_id: userId,
      role_id: roleId,
      identity_provider_id: provider.id,
    })
    changed.push(roleId)
  }
  if (changed.length > 0) m.invalidate({ type: 'user', userIds: [userId] })
}
