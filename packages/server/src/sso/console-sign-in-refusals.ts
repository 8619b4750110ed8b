import type { AdminClaimRefusal } from '@palisade/store'
import * as oauth from 'oauth4webapi'
import { IssuerUnavailableError } from './issuer-keys.js'
import type { TokenRefusal } from './token-verifier.js'

/**
 * Why a console sign-in through a provider failed (docs/sso.md#console-sign-in): for the login
 * audit, and as the `code` of the answer's detail, so the console can say what went wrong.
 */
export type ConsoleSignInRefusal =
  | TokenRefusal
  | AdminClaimRefusal
  | 'state_invalid'
  | 'state_expired'
  | 'provider_disabled'
  | 'provider_error'
  | 'code_refused'
  | 'nonce_mismatch'

/** The refusal an error of the authorization response or the code exchange stands for. */
export function refusalOfExchange(error: unknown): ConsoleSignInRefusal {
  if (error instanceof IssuerUnavailableError) return 'issuer_unavailable'
  // The provider refused the code: used already, expired, or issued for another client.
  if (error instanceof oauth.ResponseBodyError) return 'code_refused'
  if (error instanceof oauth.AuthorizationResponseError) return 'provider_error'
  if (error instanceof oauth.OperationProcessingError) {
    const claim = (error.cause as { claim?: unknown } | undefined)?.claim
    switch (error.code) {
      case oauth.JWT_CLAIM_COMPARISON:
        if (claim === 'iss') return 'token_wrong_issuer'
        if (claim === 'aud' || claim === 'azp') return 'token_wrong_audience'
        if (claim === 'nonce') return 'nonce_mismatch'
        return 'token_claims_invalid'
      case oauth.JSON_ATTRIBUTE_COMPARISON:
        // The authorization response's `iss` parameter (RFC 9207) names another issuer.
        return 'token_wrong_issuer'
      case oauth.JWT_TIMESTAMP_CHECK:
        return claim === 'exp' ? 'token_expired' : 'token_not_yet_valid'
      case oauth.INVALID_RESPONSE:
      case oauth.PARSE_ERROR:
        return 'token_malformed'
      default:
        return 'token_claims_invalid'
    }
  }
  if (error instanceof TypeError || (error instanceof Error && error.name === 'TimeoutError')) {
    return 'issuer_unavailable'
  }
  return 'token_malformed'
}
