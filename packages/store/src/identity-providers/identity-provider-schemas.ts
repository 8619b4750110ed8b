import * as v from 'valibot'
import { boundedString, uuidString } from '../kernel/validation.js'

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * An issuer is an absolute https URL without query or fragment, as OpenID Connect Discovery
 * requires; plain http only on a loopback host (a provider on the same machine, tests).
 */
export function issuerProblem(text: string): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'expected an absolute URL'
  }
  if (url.search || url.hash || url.username || url.password) {
    return 'must not have a query, fragment or credentials'
  }
  if (url.protocol === 'https:') return null
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null
  return 'must use https (http only on a loopback host)'
}

/** A claim name, or a dotted path into nested claims (`realm_access.roles`). */
const claimName = v.pipe(
  boundedString(1, 200),
  v.regex(/^[^.\s]+(\.[^.\s]+)*$/, 'expected a claim name or a dotted path'),
)

const fields = {
  name: v.pipe(
    boundedString(1, 64),
    v.regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'must match [A-Za-z][A-Za-z0-9_-]*'),
  ),
  issuer: v.pipe(
    boundedString(1, 500),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return
      const problem = issuerProblem(dataset.value)
      if (problem) addIssue({ message: problem })
    }),
  ),
  client_id: boundedString(1, 255),
  /** Write-only: `""` or absent keeps the stored secret, null removes it. */
  client_secret: v.nullish(boundedString(0, 1024)),
  audiences: v.nullish(
    v.pipe(
      v.array(boundedString(1, 255), 'expected an array'),
      v.maxLength(20, 'at most 20 audiences'),
    ),
  ),
  username_claim: v.nullish(claimName),
  role_claim: v.nullish(claimName),
  attribute_mappings: v.nullish(
    v.pipe(
      v.array(
        v.object({ claim: claimName, attribute: boundedString(1, 100) }),
        'expected an array',
      ),
      v.maxLength(50, 'at most 50 mappings'),
    ),
  ),
  role_mappings: v.nullish(
    v.pipe(
      v.array(v.object({ value: boundedString(1, 255), role_id: uuidString }), 'expected an array'),
      v.maxLength(200, 'at most 200 mappings'),
    ),
  ),
  jit_users: v.nullish(v.boolean('expected a boolean')),
  is_active: v.nullish(v.boolean('expected a boolean')),
  console_sign_in: v.nullish(v.boolean('expected a boolean')),
  /** Null: nobody is an admin through this provider (so no console sign-in). */
  admin_claim: v.nullish(v.object({ claim: claimName, value: boundedString(1, 255) })),
}

/** Body of `POST /identity-providers`. */
export const createIdentityProviderSchema = v.object(fields)
/** Body of `PUT`/`PATCH /identity-providers/{id}`. */
export const updateIdentityProviderSchema = v.partial(v.object(fields))

/** What `POST /identity-providers` accepts. */
export type CreateIdentityProviderInput = v.InferInput<typeof createIdentityProviderSchema>
