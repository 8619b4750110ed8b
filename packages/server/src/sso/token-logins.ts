import type { ClaimRefusal, Store } from '@palisade/store'
import { IssuerKeys, type IssuerKeysOptions } from './issuer-keys.js'
import { unverifiedIssuer } from './token-shape.js'
import { DEFAULT_CLOCK_SKEW_SECONDS, type TokenRefusal, verifyToken } from './token-verifier.js'

/** Why a token login failed (login audit only): the token's fault, or its claims'. */
export type TokenLoginRefusal = TokenRefusal | ClaimRefusal | 'unknown_issuer'

/** The outcome of a token login. */
export type TokenLoginResult =
  | { userId: string; expiresAt: number; refusal: null }
  | { userId: null; expiresAt: null; refusal: TokenLoginRefusal }

/** Settings of token verification (docs/sso.md). */
export interface TokenLoginOptions extends IssuerKeysOptions {
  /** Tolerated clock difference with the providers (default 30 s). */
  clockSkewSeconds?: number
  /** Told of every token login's outcome and time (metrics). */
  observe?: ((result: TokenLoginResult, elapsedMs: number) => void) | undefined
}

/** How long the "is any provider active" answer is reused (ms). */
const PROVIDERS_CHECK_MS = 5_000

/**
 * Database logins with an identity provider's token (docs/sso.md): picks the provider by the
 * token's issuer, verifies the token with that provider's keys, then finds or provisions the
 * user and refreshes their attributes and roles from the claims.
 */
export class TokenLogins {
  readonly #store: Store
  readonly #keys: IssuerKeys
  readonly #skew: number
  readonly #observe: TokenLoginOptions['observe']
  #active: { value: Promise<boolean>; at: number } | undefined

  constructor(store: Store, options: TokenLoginOptions = {}) {
    this.#store = store
    this.#keys = new IssuerKeys(options)
    this.#skew = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS
    this.#observe = options.observe
  }

  /** Whether any identity provider is active (re-read at most every 5 s). */
  available(): Promise<boolean> {
    const now = Date.now()
    if (!this.#active || now - this.#active.at > PROVIDERS_CHECK_MS) {
      const value = this.#store.identityProviders.anyActive().catch(() => false)
      this.#active = { value, at: now }
    }
    return this.#active.value
  }

  /** Whether a password is a token Palisade should verify rather than a password. */
  isToken(password: string): boolean {
    return unverifiedIssuer(password) !== undefined
  }

  /** Verifies `token` and signs its user in as `username`. */
  async login(username: string, token: string): Promise<TokenLoginResult> {
    const started = performance.now()
    const result = await this.#login(username, token)
    this.#observe?.(result, performance.now() - started)
    return result
  }

  async #login(username: string, token: string): Promise<TokenLoginResult> {
    const issuer = unverifiedIssuer(token)
    const provider = issuer ? await this.#store.identityProviders.findActiveByIssuer(issuer) : null
    if (!provider) return refused('unknown_issuer')
    const check = await verifyToken(token, provider, this.#keys, this.#skew)
    if (check.refusal) return refused(check.refusal)
    const signIn = await this.#store.identityProviders.signIn(provider, username, check.claims)
    if (signIn.refusal) return refused(signIn.refusal)
    return { userId: signIn.userId, expiresAt: check.expiresAt, refusal: null }
  }
}

function refused(refusal: TokenLoginRefusal): TokenLoginResult {
  return { userId: null, expiresAt: null, refusal }
}
