import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose'

/** How the keys of the providers are fetched and kept (docs/sso.md, "What is cached"). */
export interface IssuerKeysOptions {
  /** How long a discovery document is used before it is fetched again (default 1 h). */
  discoveryMaxAgeMs?: number
  /** How long a JWKS is used before it is fetched again (default 10 min). */
  jwksMaxAgeMs?: number
  /**
   * The shortest time between two JWKS fetches when a token names an unknown `kid` (default 30 s):
   * rotation is picked up at once, while forged `kid`s cannot make Palisade hammer the provider.
   */
  jwksCooldownMs?: number
  /** Network timeout of each fetch (default 5 s). */
  timeoutMs?: number
}

interface Discovered {
  keys: JWTVerifyGetKey
}

/** One issuer's discovery: pending (`failed` undefined), done, or failed at `at`. */
interface Entry {
  found: Promise<Discovered>
  at: number
  failed: boolean | undefined
}

/** After a failed discovery, the issuer's logins are refused this long without a new fetch. */
const FAILURE_BACKOFF_MS = 5_000

/** Thrown when the provider's discovery document or keys cannot be read. */
export class IssuerUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'IssuerUnavailableError'
  }
}

const MAX_DISCOVERY_BYTES = 256 * 1024

/** The key resolvers of each issuer: discovery document first, then its JWKS, both cached. */
export class IssuerKeys {
  readonly #options: Required<IssuerKeysOptions>
  readonly #issuers = new Map<string, Entry>()

  constructor(options: IssuerKeysOptions = {}) {
    this.#options = {
      discoveryMaxAgeMs: options.discoveryMaxAgeMs ?? 3_600_000,
      jwksMaxAgeMs: options.jwksMaxAgeMs ?? 600_000,
      jwksCooldownMs: options.jwksCooldownMs ?? 30_000,
      timeoutMs: options.timeoutMs ?? 5_000,
    }
  }

  /**
   * The key resolver of an issuer: one discovery fetch at a time per issuer, and after a failed
   * one none for `FAILURE_BACKOFF_MS`, so tokens naming an unreachable issuer cost no fetches.
   */
  async keysOf(issuer: string): Promise<JWTVerifyGetKey> {
    const cached = this.#issuers.get(issuer)
    const now = Date.now()
    if (cached) {
      const maxAge = cached.failed ? FAILURE_BACKOFF_MS : this.#options.discoveryMaxAgeMs
      if (cached.failed === undefined || now - cached.at < maxAge) return (await cached.found).keys
    }
    const entry: Entry = { found: this.#discover(issuer), at: now, failed: undefined }
    this.#issuers.set(issuer, entry)
    entry.found.then(
      () => {
        entry.failed = false
      },
      () => {
        entry.failed = true
      },
    )
    return (await entry.found).keys
  }

  async #discover(issuer: string): Promise<Discovered> {
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
    let document: unknown
    try {
      const res = await fetch(url, {
        signal: AbortSignal.timeout(this.#options.timeoutMs),
        redirect: 'error',
        headers: { accept: 'application/json' },
      })
      if (!res.ok) throw new Error(`discovery answered ${res.status}`)
      const text = await res.text()
      if (text.length > MAX_DISCOVERY_BYTES) throw new Error('discovery document too large')
      document = JSON.parse(text)
    } catch (error) {
      throw new IssuerUnavailableError(`cannot read the discovery document of ${issuer}`, {
        cause: error,
      })
    }
    const doc = document as { issuer?: unknown; jwks_uri?: unknown }
    // OpenID Connect Discovery 4.3: the document must name the very issuer it was fetched for.
    if (doc.issuer !== issuer || typeof doc.jwks_uri !== 'string') {
      throw new IssuerUnavailableError(`the discovery document of ${issuer} does not match it`)
    }
    const jwksUrl = new URL(doc.jwks_uri)
    if (jwksUrl.protocol !== 'https:' && new URL(issuer).protocol === 'https:') {
      throw new IssuerUnavailableError(`the JWKS of ${issuer} is not served over https`)
    }
    const keys = createRemoteJWKSet(jwksUrl, {
      cacheMaxAge: this.#options.jwksMaxAgeMs,
      cooldownDuration: this.#options.jwksCooldownMs,
      timeoutDuration: this.#options.timeoutMs,
    })
    return { keys }
  }
}
