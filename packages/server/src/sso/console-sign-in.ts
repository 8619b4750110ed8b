import { type IdentityProvider, type Store, usernameOf } from '@palisade/store'
import * as oauth from 'oauth4webapi'
import { AuthorizationServers } from './authorization-server.js'
import { type ConsoleSignInRefusal, refusalOfExchange } from './console-sign-in-refusals.js'
import { IssuerKeys, type IssuerKeysOptions } from './issuer-keys.js'
import { DEFAULT_CLOCK_SKEW_SECONDS, verifyToken } from './token-verifier.js'

/** How long a sign-in may take between the redirect to the provider and the callback. */
export const SIGN_IN_TTL_MS = 10 * 60_000

/** Scopes asked for: the ID token's subject, username and e-mail. */
const SCOPE = 'openid profile email'

/** Settings of console sign-in (docs/sso.md#console-sign-in). */
export interface ConsoleSignInOptions extends IssuerKeysOptions {
  /** Tolerated clock difference with the providers (default 30 s). */
  clockSkewSeconds?: number
}

/** The outcome of a callback: the admin to give a console session, or why not. */
export type ConsoleSignInResult =
  | { userId: string; username: string; refusal: null }
  | { userId: null; username: string; refusal: ConsoleSignInRefusal }

/** What the console sends back from the provider's redirect (its query parameters). */
export interface CallbackParameters {
  state: string
  code?: string | undefined
  iss?: string | undefined
  error?: string | undefined
  error_description?: string | undefined
}

/**
 * Admin sign-in to the console through an identity provider: authorization code flow with PKCE
 * (S256), `state` and `nonce` generated here and kept in the store for one use within
 * {@link SIGN_IN_TTL_MS}; the code exchange through `oauth4webapi`, then the ID token verified
 * with the same code as token logins (signature by the provider's JWKS, pinned algorithms,
 * issuer, the client id as audience, times with the skew) before the provider's admin claim
 * decides (admin-sign-in.ts in the store).
 */
export class ConsoleSignIns {
  readonly #store: Store
  readonly #keys: IssuerKeys
  readonly #servers = new AuthorizationServers()
  readonly #skew: number

  constructor(store: Store, options: ConsoleSignInOptions = {}) {
    this.#store = store
    this.#keys = new IssuerKeys(options)
    this.#skew = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS
  }

  /**
   * Starts a sign-in: records state, nonce and PKCE verifier, and answers the provider's
   * authorization URL and the state (which the caller binds to the browser).
   */
  async begin(
    provider: IdentityProvider,
    redirectUri: string,
  ): Promise<{ authorizationUrl: string; state: string }> {
    const { server } = await this.#clientOf(provider)
    if (!server.authorization_endpoint)
      throw new Error('the provider has no authorization endpoint')
    const state = oauth.generateRandomState()
    const nonce = oauth.generateRandomNonce()
    const codeVerifier = oauth.generateRandomCodeVerifier()
    await this.#store.ssoSignIns.begin(
      state,
      { identityProviderId: provider.id, nonce, codeVerifier, redirectUri },
      SIGN_IN_TTL_MS,
    )
    const url = new URL(server.authorization_endpoint)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: provider.client_id,
      redirect_uri: redirectUri,
      scope: SCOPE,
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString()
    return { authorizationUrl: url.href, state }
  }

  /** Completes a sign-in from the provider's redirect; the state is used up whatever happens. */
  async complete(params: CallbackParameters): Promise<ConsoleSignInResult> {
    const consumed = await this.#store.ssoSignIns.consume(params.state)
    if (consumed.status === 'unknown') return refused('state_invalid')
    if (consumed.status === 'expired') return refused('state_expired')
    const { pending } = consumed
    const provider = await this.#store.identityProviders
      .get(pending.identityProviderId)
      .catch(() => null)
    if (!provider?.is_active || !provider.console_sign_in) return refused('provider_disabled')
    if (params.error) return refused('provider_error')
    if (params.iss !== undefined && params.iss !== provider.issuer) {
      return refused('token_wrong_issuer')
    }
    let idToken: string
    try {
      idToken = await this.#exchange(provider, params, pending)
    } catch (error) {
      return refused(refusalOfExchange(error))
    }
    const check = await verifyToken(idToken, provider, this.#keys, this.#skew, provider.client_id)
    if (check.refusal) return refused(check.refusal)
    // The login audit names the user as the token does, dotted claim paths included.
    const username = usernameOf(check.claims, provider.username_claim) ?? ''
    // Checked by oauth4webapi already; kept here so the rule does not depend on a library.
    if (check.claims['nonce'] !== pending.nonce) return refused('nonce_mismatch', username)
    const signIn = await this.#store.identityProviders.adminSignIn(provider, check.claims)
    if (signIn.refusal) return refused(signIn.refusal, username)
    return { userId: signIn.userId, username, refusal: null }
  }

  async #exchange(
    provider: IdentityProvider,
    params: CallbackParameters,
    pending: { nonce: string; codeVerifier: string; redirectUri: string },
  ): Promise<string> {
    const { server, client, auth, options } = await this.#clientOf(provider)
    const response = new URLSearchParams({ state: params.state, code: params.code ?? '' })
    if (params.iss !== undefined) response.set('iss', params.iss)
    const callback = oauth.validateAuthResponse(server, client, response, params.state)
    const answer = await oauth.authorizationCodeGrantRequest(
      server,
      client,
      auth,
      callback,
      pending.redirectUri,
      pending.codeVerifier,
      options,
    )
    const tokens = await oauth.processAuthorizationCodeResponse(server, client, answer, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    })
    if (!tokens.id_token) throw new oauth.OperationProcessingError('no ID token')
    return tokens.id_token
  }

  async #clientOf(provider: IdentityProvider) {
    const secret = await this.#store.identityProviders.clientSecretOf(provider.id)
    return this.#servers.clientOf(provider, secret, this.#skew)
  }
}

function refused(refusal: ConsoleSignInRefusal, username = ''): ConsoleSignInResult {
  return { userId: null, username, refusal }
}
