import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** Claims of an admin token (docs/admin-api.md#signing-in). */
export interface AdminTokenClaims {
  sub: string
  username: string
  /** Informational only: every request re-reads the flag from the store. */
  is_admin: boolean
  iat: number
  exp: number
  /**
   * A random id, so that every login yields a distinct token and a logout ends that one only.
   * Absent in tokens issued before the claim existed (see `tokenId`).
   */
  jti?: string
}

/** Clock skew tolerated on `exp` (docs/admin-api.md#signing-in). */
export const EXP_LEEWAY_SECONDS = 30

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))

function base64url(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url')
}

function sign(input: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(input).digest()
}

/** Signs claims as an HS256 JWT. */
export function signToken(claims: AdminTokenClaims, secret: string): string {
  const body = `${HEADER}.${base64url(JSON.stringify(claims))}`
  return `${body}.${sign(body, secret).toString('base64url')}`
}

/**
 * Verifies signature, algorithm and expiry; returns the claims or null. Which check failed is
 * deliberately not reported: every failure is the same 401 invalid_token.
 */
export function verifyToken(
  token: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): AdminTokenClaims | null {
  const parts = token.split('.')
  if (parts.length !== 3) return null
  const [header, payload, signature] = parts as [string, string, string]
  const expected = sign(`${header}.${payload}`, secret)
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  const parsedHeader = parseJson(header)
  // Only HS256: a token claiming another algorithm is rejected even with a valid MAC.
  if (parsedHeader?.['alg'] !== 'HS256') return null
  const claims = parseJson(payload)
  if (!claims) return null
  const { sub, username, is_admin, iat, exp, jti } = claims
  if (typeof sub !== 'string' || typeof username !== 'string') return null
  if (typeof iat !== 'number' || typeof exp !== 'number') return null
  if (jti !== undefined && (typeof jti !== 'string' || jti === '')) return null
  if (exp + EXP_LEEWAY_SECONDS < nowSeconds) return null
  const verified: AdminTokenClaims = { sub, username, is_admin: is_admin === true, iat, exp }
  if (jti !== undefined) verified.jti = jti
  return verified
}

/** A fresh `jti`: 128 random bits, base64url. */
export function newTokenId(): string {
  return randomBytes(16).toString('base64url')
}

function parseJson(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

/**
 * A token's id for revocation: its `jti` claim. A token issued before the claim existed (still
 * valid until its `exp`) is identified by a digest of the whole token instead.
 */
export function tokenId(token: string, claims: AdminTokenClaims): string {
  return claims.jti ?? createHash('sha256').update(token).digest('base64url')
}
