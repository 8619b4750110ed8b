import { randomBytes } from 'node:crypto'
import { SYSTEM_ACTOR_ID } from '../access/grant-expiry.js'
import type { StoreContext } from '../kernel/context.js'
import { sqlStateOf } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { userIdentities, users } from '../tables.js'
import { createScramVerifier, formatScramVerifier } from '../users/scram.js'
import type { IdentityProvider } from './identity-providers-service.js'

/** A sign-in the verified claims do not allow; `reason` goes to the login audit only. */
export class SignInRefused<R extends string> extends Error {
  constructor(readonly reason: R) {
    super(reason)
  }
}

/** The outcome of a sign-in with verified claims: the user, or why not. */
export type ClaimsOutcome<R extends string> =
  | { userId: string; refusal: null }
  | { userId: null; refusal: R }

/**
 * Runs a sign-in's user sync as one store mutation of the system actor; a `SignInRefused` it
 * throws is the refusal. Two first sign-ins of one user at once: the second, stopped by the user
 * or link the first created (a unique violation), runs once more and finds them.
 */
export async function syncSignIn<R extends string>(
  ctx: StoreContext,
  sync: (m: Mutation) => Promise<ClaimsOutcome<R>>,
): Promise<ClaimsOutcome<R>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.mutate(SYSTEM_ACTOR_ID, sync)
    } catch (error) {
      if (error instanceof SignInRefused) return { userId: null, refusal: error.reason as R }
      if (sqlStateOf(error) === '23505' && attempt === 0) continue
      throw error
    }
  }
}

/**
 * Creates the user a provider's sign-in names, linked to its subject, with a password nobody
 * knows (it signs in through the provider only), audited as `user`/`create`. An admin made so
 * is marked as granted by the provider, which may take it back.
 */
export async function createProviderUser(
  m: Mutation,
  provider: IdentityProvider,
  username: string,
  subject: string,
  isAdmin: boolean,
): Promise<string> {
  const userId = uuidv7()
  const secret = randomBytes(32).toString('base64')
  await m.tx.insert(users).values({
    id: userId,
    username,
    isAdmin,
    scramVerifier: formatScramVerifier(await createScramVerifier(secret)),
    attributes: {},
    passwordChangedAt: m.now,
    createdBy: SYSTEM_ACTOR_ID,
    updatedBy: SYSTEM_ACTOR_ID,
    createdAt: m.now,
    updatedAt: m.now,
  })
  await m.tx.insert(userIdentities).values({
    userId,
    identityProviderId: provider.id,
    subject,
    ...(isAdmin ? { adminGranted: true } : {}),
    createdAt: m.now,
  })
  m.audit('user', userId, 'create', {
    after: {
      username,
      is_admin: isAdmin,
      is_active: true,
      email: null,
      display_name: null,
      attributes: {},
    },
    identity_provider_id: provider.id,
  })
  return userId
}
