import type { ConsoleSignInRefusal } from '../sso/console-sign-in-refusals.js'

/**
 * What the console shows for each refused sign-in through a provider: enough for the admin to
 * act on, nothing about other accounts. The reason itself is the answer's detail code.
 */
export const SSO_REFUSAL_MESSAGES: Readonly<Record<ConsoleSignInRefusal, string>> = {
  state_invalid: 'this sign-in is unknown, was already used or belongs to another browser',
  state_expired: 'this sign-in took too long; start again',
  provider_disabled: 'the identity provider is not enabled for console sign-in',
  provider_error: 'the identity provider did not sign you in',
  code_refused: 'the identity provider refused the authorization code',
  nonce_mismatch: 'the ID token was not issued for this sign-in',
  issuer_unavailable: 'the identity provider cannot be reached',
  token_expired: 'the ID token has expired',
  token_not_yet_valid: 'the ID token is not valid yet',
  token_wrong_issuer: 'the ID token comes from another issuer',
  token_wrong_audience: 'the ID token was issued for another client',
  token_bad_signature: 'the ID token signature does not verify',
  token_unknown_key: 'the ID token is signed with an unknown key',
  token_algorithm_refused: 'the ID token uses a refused signature algorithm',
  token_malformed: 'the identity provider sent a malformed answer',
  token_claims_invalid: 'the ID token has invalid claims',
  missing_username_claim: 'the ID token names no user',
  missing_subject: 'the ID token has no subject',
  admin_claim_missing: 'your account at the identity provider does not grant admin access',
  unknown_user: 'no such Palisade user, and the provider does not create users',
  inactive_user: 'the Palisade user is deactivated',
  invalid_username: 'the username from the identity provider is not a valid Palisade username',
  identity_mismatch: 'the Palisade user of that name is linked to another identity or is local',
}
