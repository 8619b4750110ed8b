import type { IdentityProvider } from '@palisade/store'
import type { Context } from 'hono'
import { SIGN_IN_TTL_MS } from '../../sso/console-sign-in.js'
import { IssuerUnavailableError } from '../../sso/issuer-keys.js'
import {
  consoleSignInProvidersAnswer,
  consoleSignInStartAnswer,
} from '../answers/identity-provider-answers.js'
import { sessionAnswer } from '../answers/user-answers.js'
import { ApiError } from '../api-error.js'
import { clientAddress } from '../client-address.js'
import type { AdminDeps, AdminEnv } from '../env.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { ssoCallbackBody, ssoStartBody } from '../schemas/auth.js'
import { startSession } from '../session-cookie.js'
import { issueAdminToken } from '../sign-in.js'
import { SSO_REFUSAL_MESSAGES } from '../sso-refusal-messages.js'
import { setStateCookie, takeStateCookie } from '../sso-state-cookie.js'

const TAG = 'auth'

/** Where the provider sends the browser back: the console, which posts the callback. */
function redirectUri(c: Context<AdminEnv>, deps: AdminDeps): string {
  return deps.consoleUrl ?? `${new URL(c.req.url).origin}/ui`
}

async function consoleProvider(deps: AdminDeps, id: string): Promise<IdentityProvider> {
  const provider = await deps.store.identityProviders.get(id).catch(() => null)
  if (!provider?.is_active || !provider.console_sign_in) {
    throw new ApiError(404, 'not_found', 'no identity provider with console sign-in has that id')
  }
  return provider
}

/**
 * Console sign-in through an identity provider (docs/sso.md#console-sign-in): the page lists the
 * providers, starts a sign-in (the browser goes to the provider), and posts the provider's
 * redirect back; a verified admin gets the same console session as `POST /auth/session`.
 */
export const ssoRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/auth/sso/providers',
    summary: 'The identity providers offered on the console sign-in page',
    tag: TAG,
    auth: 'none',
    status: 200,
    response: consoleSignInProvidersAnswer,
    async handler({ c, deps }) {
      const providers = await deps.store.identityProviders.listConsoleSignIn()
      return c.json({ data: providers.map((p) => ({ id: p.id, name: p.name })) })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/sso/start',
    summary:
      'Start a console sign-in through an identity provider (authorization code with PKCE): answers the URL to send the browser to',
    tag: TAG,
    auth: 'none',
    status: 200,
    response: consoleSignInStartAnswer,
    body: ssoStartBody,
    async handler({ c, deps, body }) {
      const provider = await consoleProvider(deps, body.provider_id)
      try {
        const started = await deps.consoleSignIns.begin(provider, redirectUri(c, deps))
        setStateCookie(c, started.state, SIGN_IN_TTL_MS / 1000)
        return c.json({ authorization_url: started.authorizationUrl })
      } catch (error) {
        if (!(error instanceof IssuerUnavailableError)) throw error
        throw new ApiError(503, 'issuer_unavailable', SSO_REFUSAL_MESSAGES.issuer_unavailable)
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/sso/callback',
    summary:
      "Finish a console sign-in with the provider's redirect parameters: a verified admin gets the console session cookie",
    tag: TAG,
    auth: 'none',
    status: 200,
    response: sessionAnswer,
    body: ssoCallbackBody,
    async handler({ c, deps, body }) {
      const address = clientAddress(c)
      const decision = deps.logins.check({ plane: 'admin', username: '', address })
      if (decision.throttled) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
        throw new ApiError(
          429,
          'too_many_attempts',
          `too many failed logins; try again in ${seconds} s`,
          [],
          {
            'Retry-After': String(seconds),
          },
        )
      }
      const bound = takeStateCookie(c, body.state)
      // A state from another browser is used up too: it cannot be tried again where it belongs.
      const result = bound
        ? await deps.consoleSignIns.complete(body)
        : await deps.store.ssoSignIns
            .consume(body.state)
            .then(() => ({ userId: null, username: '', refusal: 'state_invalid' as const }))
      const attempt = { plane: 'admin' as const, username: result.username, address }
      if (result.refusal) {
        deps.logins.failed(attempt, result.refusal)
        // The detail names the reason as the login audit records it.
        throw new ApiError(401, 'sso_refused', SSO_REFUSAL_MESSAGES[result.refusal], [
          { field: 'reason', code: result.refusal, message: result.refusal },
        ])
      }
      deps.logins.succeeded(attempt)
      return startSession(c, deps, await issueAdminToken(deps, result.userId))
    },
  }),
]
