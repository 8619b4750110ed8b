import type { IdentityProvider } from '@palisade/store'
import { errors, type JWTPayload, jwtVerify } from 'jose'
import { type IssuerKeys, IssuerUnavailableError } from './issuer-keys.js'

/**
 * Signature algorithms a token may use: asymmetric only. `none` and the HMAC family are never
 * accepted (an HMAC "signed" with a public key would be a forgery anyone can make). Within this
 * list the key decides: a JWK that declares `alg` only verifies tokens of that `alg`.
 */
export const TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]

/** Tolerated difference between Palisade's clock and the provider's (docs/sso.md). */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30
/** A token issued longer ago than this is refused, whatever its `exp` says. */
const MAX_TOKEN_AGE = '24h'

/** Why a token was refused, for the login audit only (clients get one answer). */
export type TokenRefusal =
  | 'token_expired'
  | 'token_not_yet_valid'
  | 'token_wrong_issuer'
  | 'token_wrong_audience'
  | 'token_bad_signature'
  | 'token_unknown_key'
  | 'token_algorithm_refused'
  | 'token_malformed'
  | 'token_claims_invalid'
  | 'issuer_unavailable'

/** A verified token's claims and when it expires (ms since the epoch). */
export type TokenCheck =
  | { claims: JWTPayload; expiresAt: number; refusal: null }
  | { claims: null; expiresAt: null; refusal: TokenRefusal }

/**
 * Verifies a token against one provider: signature by a key of the provider's JWKS (discovered
 * from its issuer), `iss` equal to the provider's issuer, `aud` among its audiences (its client
 * id when none are set), `exp` required and `nbf`/`iat` honoured with `clockSkewSeconds`.
 * An ID token names the client itself: pass `audience` (the client id) to expect only that.
 */
export async function verifyToken(
  token: string,
  provider: IdentityProvider,
  keys: IssuerKeys,
  clockSkewSeconds = DEFAULT_CLOCK_SKEW_SECONDS,
  audience: string | string[] = provider.audiences.length > 0
    ? provider.audiences
    : provider.client_id,
): Promise<TokenCheck> {
  try {
    const resolver = await keys.keysOf(provider.issuer)
    const { payload } = await jwtVerify(token, resolver, {
      issuer: provider.issuer,
      audience,
      algorithms: TOKEN_ALGORITHMS,
      clockTolerance: clockSkewSeconds,
      maxTokenAge: MAX_TOKEN_AGE,
      requiredClaims: ['exp', 'iat', 'sub'],
    })
    return { claims: payload, expiresAt: (payload.exp as number) * 1000, refusal: null }
  } catch (error) {
    return { claims: null, expiresAt: null, refusal: refusalOf(error) }
  }
}

function refusalOf(error: unknown): TokenRefusal {
  if (error instanceof IssuerUnavailableError || error instanceof errors.JWKSTimeout) {
    return 'issuer_unavailable'
  }
  if (error instanceof errors.JWTExpired) return 'token_expired'
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
      case 'iat':
        return 'token_not_yet_valid'
      case 'iss':
        return 'token_wrong_issuer'
      case 'aud':
        return 'token_wrong_audience'
      default:
        return 'token_claims_invalid'
    }
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token_bad_signature'
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return 'token_unknown_key'
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return 'token_algorithm_refused'
  }
  // A JWKS that cannot be fetched or read is the provider's trouble, not the token's.
  if (error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError)) {
    return 'issuer_unavailable'
  }
  // JWSInvalid, JWTInvalid and anything a hostile token provokes: refused, never thrown.
  return 'token_malformed'
}
