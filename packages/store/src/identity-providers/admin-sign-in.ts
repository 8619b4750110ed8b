import { and, eq } from 'drizzle-orm'
import * as v from 'valibot'
import { SYSTEM_ACTOR_ID } from '../access/grant-expiry.js'
import type { StoreContext } from '../kernel/context.js'
import type { Mutation } from '../kernel/mutation.js'
import { identName } from '../kernel/validation.js'
import { userIdentities, users } from '../tables.js'
import { claimValues, stringClaim, usernameOf } from './claim-values.js'
import type { IdentityProvider } from './identity-providers-service.js'
import {
  type ClaimsOutcome,
  createProviderUser,
  SignInRefused,
  syncSignIn,
} from './provider-user-sync.js'

/** Why verified ID token claims do not sign an admin in to the console (login audit only). */
export type AdminClaimRefusal =
  | 'missing_username_claim'
  | 'missing_subject'
  | 'admin_claim_missing'
  | 'unknown_user'
  | 'inactive_user'
  | 'invalid_username'
  | 'identity_mismatch'

/** The outcome of a console sign-in with verified claims. */
export type AdminSignIn = ClaimsOutcome<AdminClaimRefusal>

type UserRow = typeof users.$inferSelect
type LinkRow = typeof userIdentities.$inferSelect

const Refused = SignInRefused<AdminClaimRefusal>

/** Whether the claims carry the provider's admin claim value (a string or one of an array). */
export function hasAdminClaim(
  provider: IdentityProvider,
  claims: Readonly<Record<string, unknown>>,
): boolean {
  const rule = provider.admin_claim
  return rule !== null && claimValues(claims, rule.claim).has(rule.value)
}

/**
 * Signs an admin in to the console with an ID token's verified claims (docs/sso.md#console-sign-in).
 * Admin rights come from the provider's `admin_claim` only: with it the user (found by link or
 * username, or created when `jit_users`) is made an admin, audited with the system actor;
 * without it nothing is granted, and an admin this provider made loses the flag. A local admin
 * that is not linked to the provider is never taken over, so the break-glass account stays local.
 */
export async function adminSignInWithClaims(
  ctx: StoreContext,
  provider: IdentityProvider,
  claims: Readonly<Record<string, unknown>>,
): Promise<AdminSignIn> {
  const username = usernameOf(claims, provider.username_claim)
  if (!username) return { userId: null, refusal: 'missing_username_claim' }
  const subject = stringClaim(claims, 'sub')
  if (!subject || subject.length > 255) return { userId: null, refusal: 'missing_subject' }
  const isAdmin = hasAdminClaim(provider, claims)
  return syncSignIn<AdminClaimRefusal>(ctx, (m) =>
    syncAdmin(m, provider, username, subject, isAdmin),
  )
}

async function syncAdmin(
  m: Mutation,
  provider: IdentityProvider,
  username: string,
  subject: string,
  isAdmin: boolean,
): Promise<AdminSignIn> {
  const [linked] = await m.tx
    .select()
    .from(userIdentities)
    .where(
      and(eq(userIdentities.identityProviderId, provider.id), eq(userIdentities.subject, subject)),
    )
    .for('update')
  const row = linked ? await userById(m, linked.userId) : await userByName(m, username)
  if (!isAdmin) {
    // The claim is gone: an admin this provider made is one no longer. Nothing else changes.
    if (row && linked?.adminGranted && row.isAdmin) await setAdmin(m, provider, row, linked, false)
    if (m.entries.length === 0) m.noop()
    return { userId: null, refusal: 'admin_claim_missing' }
  }
  if (!row) {
    if (!provider.jit_users) throw new Refused('unknown_user')
    if (!v.is(identName, username)) throw new Refused('invalid_username')
    const userId = await createProviderUser(m, provider, username, subject, true)
    return { userId, refusal: null }
  }
  if (!row.isActive) throw new Refused('inactive_user')
  const link = linked ?? (await linkExisting(m, provider, row, subject))
  if (!row.isAdmin) await setAdmin(m, provider, row, link, true)
  if (m.entries.length === 0) m.noop()
  return { userId: row.id, refusal: null }
}

async function userById(m: Mutation, id: string): Promise<UserRow | undefined> {
  const [row] = await m.tx.select().from(users).where(eq(users.id, id)).for('update')
  return row
}

async function userByName(m: Mutation, username: string): Promise<UserRow | undefined> {
  const [row] = await m.tx.select().from(users).where(eq(users.username, username)).for('update')
  return row
}

/** Links an unlinked user of that name; a local admin or a user linked elsewhere is refused. */
async function linkExisting(
  m: Mutation,
  provider: IdentityProvider,
  row: UserRow,
  subject: string,
): Promise<LinkRow> {
  const [existing] = await m.tx
    .select()
    .from(userIdentities)
    .where(eq(userIdentities.userId, row.id))
  if (existing || row.isAdmin) throw new Refused('identity_mismatch')
  const [link] = await m.tx
    .insert(userIdentities)
    .values({ userId: row.id, identityProviderId: provider.id, subject, createdAt: m.now })
    .returning()
  m.audit('user', row.id, 'update', {
    before: { identity_provider_id: null },
    after: { identity_provider_id: provider.id },
  })
  return link as LinkRow
}

async function setAdmin(
  m: Mutation,
  provider: IdentityProvider,
  row: UserRow,
  link: LinkRow,
  isAdmin: boolean,
): Promise<void> {
  await m.tx
    .update(users)
    .set({ isAdmin, updatedBy: SYSTEM_ACTOR_ID, updatedAt: m.now })
    .where(eq(users.id, row.id))
  await m.tx
    .update(userIdentities)
    .set({ adminGranted: isAdmin })
    .where(eq(userIdentities.userId, link.userId))
  m.audit('user', row.id, 'update', {
    before: { is_admin: !isAdmin },
    after: { is_admin: isAdmin },
    identity_provider_id: provider.id,
    reason: isAdmin ? 'admin_claim' : 'admin_claim_missing',
  })
  m.invalidate({ type: 'user', userIds: [row.id] })
}
