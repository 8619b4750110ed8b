import { eq, lt, sql } from 'drizzle-orm'
import type { StoreContext } from '../kernel/context.js'
import { revokedTokens } from '../tables.js'

/**
 * Admin tokens ended by logout before their expiry. Session bookkeeping, like `recordLogin`:
 * not an admin change, so not audited. Every instance sharing the store sees a revocation.
 */
export class TokensService {
  readonly #ctx: StoreContext

  constructor(context: StoreContext) {
    this.#ctx = context
  }

  /** Ends a token (by its id) until it expires; rows of expired tokens are dropped on the way. */
  async revoke(tokenId: string, userId: string, expiresAt: Date): Promise<void> {
    const { db } = this.#ctx
    await db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, sql`now()`))
    await db
      .insert(revokedTokens)
      .values({ tokenId, userId, expiresAt })
      .onConflictDoNothing({ target: revokedTokens.tokenId })
  }

  /** Whether a token was ended by logout. */
  async isRevoked(tokenId: string): Promise<boolean> {
    const [row] = await this.#ctx.db
      .select({ tokenId: revokedTokens.tokenId })
      .from(revokedTokens)
      .where(eq(revokedTokens.tokenId, tokenId))
    return row !== undefined
  }
}
