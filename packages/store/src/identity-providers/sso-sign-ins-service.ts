import { createHash } from 'node:crypto'
import { eq, lt, sql } from 'drizzle-orm'
import type { StoreContext } from '../kernel/context.js'
import { ssoSignIns } from '../tables.js'

/** What a console sign-in keeps between the redirect to the provider and its callback. */
export interface PendingSsoSignIn {
  identityProviderId: string
  nonce: string
  codeVerifier: string
  redirectUri: string
}

/** A consumed sign-in: found and fresh, found too late, or unknown (never begun or used). */
export type ConsumedSsoSignIn =
  | { status: 'ok'; pending: PendingSsoSignIn }
  | { status: 'expired' }
  | { status: 'unknown' }

function digest(state: string): string {
  return createHash('sha256').update(state).digest('base64url')
}

/**
 * Console sign-ins under way (docs/sso.md#console-sign-in). Kept in the store, not in memory, so
 * the callback may reach another instance than the redirect did; each is consumed once. Session
 * bookkeeping like revoked tokens: not audited.
 */
export class SsoSignInsService {
  readonly #ctx: StoreContext

  constructor(context: StoreContext) {
    this.#ctx = context
  }

  /** Records a sign-in under its `state` for `ttlMs`; expired ones are dropped on the way. */
  async begin(state: string, pending: PendingSsoSignIn, ttlMs: number): Promise<void> {
    const { db, secrets } = this.#ctx
    await db.delete(ssoSignIns).where(lt(ssoSignIns.expiresAt, sql`now()`))
    await db.insert(ssoSignIns).values({
      stateHash: digest(state),
      identityProviderId: pending.identityProviderId,
      nonce: pending.nonce,
      codeVerifier: secrets.seal(pending.codeVerifier),
      redirectUri: pending.redirectUri,
      expiresAt: new Date(Date.now() + ttlMs),
    })
  }

  /** Takes the sign-in of `state` out of the store: a second call finds nothing. */
  async consume(state: string): Promise<ConsumedSsoSignIn> {
    const { db, secrets } = this.#ctx
    const [row] = await db
      .delete(ssoSignIns)
      .where(eq(ssoSignIns.stateHash, digest(state)))
      .returning()
    if (!row) return { status: 'unknown' }
    if (row.expiresAt.getTime() <= Date.now()) return { status: 'expired' }
    return {
      status: 'ok',
      pending: {
        identityProviderId: row.identityProviderId,
        nonce: row.nonce,
        codeVerifier: secrets.open(row.codeVerifier),
        redirectUri: row.redirectUri,
      },
    }
  }
}
