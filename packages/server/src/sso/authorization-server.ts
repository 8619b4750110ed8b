import type { IdentityProvider } from '@palisade/store'
import * as oauth from 'oauth4webapi'
import { IssuerUnavailableError } from './issuer-keys.js'

/** How long a provider's discovered endpoints are reused (as the token logins' discovery). */
const METADATA_MAX_AGE_MS = 3_600_000
const FETCH_TIMEOUT_MS = 5_000

/** The provider's endpoints, and Palisade as its client (console sign-in). */
export interface ProviderClient {
  server: oauth.AuthorizationServer
  client: oauth.Client
  auth: oauth.ClientAuth
  /** Loopback `http` issuers (allowed by the provider's validation) need this to be reached. */
  options: { [oauth.allowInsecureRequests]?: boolean; signal?: AbortSignal }
}

/**
 * Discovers each issuer's endpoints through `oauth4webapi` (which checks that the document names
 * the issuer it was fetched for) and keeps them an hour; a failure is not kept.
 */
export class AuthorizationServers {
  readonly #cache = new Map<string, { at: number; server: Promise<oauth.AuthorizationServer> }>()

  /** The provider's endpoints and client settings; IssuerUnavailableError when unreachable. */
  async clientOf(
    provider: IdentityProvider,
    clientSecret: string | null,
    clockSkewSeconds: number,
  ): Promise<ProviderClient> {
    const insecure = new URL(provider.issuer).protocol === 'http:'
    const server = await this.#server(provider.issuer, insecure)
    return {
      server,
      client: { client_id: provider.client_id, [oauth.clockTolerance]: clockSkewSeconds },
      // A client without a secret is a public client: PKCE alone protects its code.
      auth: clientSecret ? oauth.ClientSecretBasic(clientSecret) : oauth.None(),
      options: requestOptions(insecure),
    }
  }

  #server(issuer: string, insecure: boolean): Promise<oauth.AuthorizationServer> {
    const cached = this.#cache.get(issuer)
    if (cached && Date.now() - cached.at < METADATA_MAX_AGE_MS) return cached.server
    const server = discover(issuer, insecure)
    this.#cache.set(issuer, { at: Date.now(), server })
    server.catch(() => this.#cache.delete(issuer))
    return server
  }
}

async function discover(issuer: string, insecure: boolean): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer)
  try {
    const response = await oauth.discoveryRequest(url, {
      algorithm: 'oidc',
      ...requestOptions(insecure),
    })
    return await oauth.processDiscoveryResponse(url, response)
  } catch (error) {
    throw new IssuerUnavailableError(`cannot read the discovery document of ${issuer}`, {
      cause: error,
    })
  }
}

function requestOptions(insecure: boolean): ProviderClient['options'] {
  return {
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}),
  }
}
