import { decodeJwt } from 'jose'

/**
 * Longest token accepted (UTF-8 bytes). Provider tokens with many groups stay well under it; a
 * longer "password" is refused before any parsing or network work.
 */
export const MAX_TOKEN_BYTES = 16 * 1024

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/**
 * The issuer a password names when it is shaped like a signed JWT (three base64url parts whose
 * payload has a string `iss`), else undefined. Nothing here is verified: the issuer only picks
 * which provider's keys will check the signature.
 */
export function unverifiedIssuer(password: string): string | undefined {
  if (password.length > MAX_TOKEN_BYTES || !COMPACT_JWS.test(password)) return undefined
  try {
    const iss = decodeJwt(password).iss
    return typeof iss === 'string' && iss.length > 0 ? iss : undefined
  } catch {
    return undefined
  }
}
