/**
 * Reading claims from a verified token payload. Claims come from a provider an admin trusts, but
 * their shapes vary (and a misconfigured provider sends anything): every reader checks types and
 * answers undefined rather than throwing.
 */

/** The value at a claim name or dotted path (`realm_access.roles`); own properties only. */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  let value: unknown = claims
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    if (!Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/** A non-empty string claim, or undefined. */
export function stringClaim(claims: Readonly<Record<string, unknown>>, path: string) {
  const value = claimAt(claims, path)
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/** The username a token names (docs/sso.md): the configured claim, else preferred_username, email, sub. */
export function usernameOf(
  claims: Readonly<Record<string, unknown>>,
  usernameClaim: string | null,
): string | undefined {
  if (usernameClaim) return stringClaim(claims, usernameClaim)
  return (
    stringClaim(claims, 'preferred_username') ??
    stringClaim(claims, 'email') ??
    stringClaim(claims, 'sub')
  )
}

/** The values of a role claim: one string or an array of them (other elements are ignored). */
export function claimValues(claims: Readonly<Record<string, unknown>>, path: string): Set<string> {
  const value = claimAt(claims, path)
  if (typeof value === 'string') return new Set([value])
  if (!Array.isArray(value)) return new Set()
  return new Set(value.filter((v): v is string => typeof v === 'string'))
}

/**
 * A claim value in the form an attribute definition accepts: numbers and booleans become their
 * text for string attributes (a numeric `org_id`); everything else is passed on to be checked.
 */
export function attributeInput(value: unknown, valueType: string): unknown {
  if (valueType === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return String(value)
  }
  return value
}
