import { useEffect, useState } from 'preact/hooks'
import { type ApiFailure, api, type Session } from '../api'
import { ActionError, useAction } from '../ui/forms'

interface SignInProvider {
  id: string
  name: string
}

/** The parameters the identity provider sends the browser back with, if this load is that. */
function providerRedirect(): Record<string, string> | null {
  const query = new URLSearchParams(window.location.search)
  const state = query.get('state')
  if (!state || !(query.has('code') || query.has('error'))) return null
  const out: Record<string, string> = { state }
  for (const key of ['code', 'iss', 'error', 'error_description']) {
    const value = query.get(key)
    if (value !== null) out[key] = value
  }
  return out
}

/**
 * Finishes a sign-in through an identity provider when the page was loaded by its redirect
 * (docs/sso.md#console-sign-in): the server checks the state, exchanges the code and verifies
 * the ID token. The query leaves the address either way, so a reload does not post it again.
 * Resolves null when this load is not a provider's redirect.
 */
export async function completeProviderSignIn(): Promise<Session | null> {
  const params = providerRedirect()
  if (!params) return null
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash}`)
  return api<Session>('POST', '/auth/sso/callback', params)
}

/** "Sign in with …" for each provider enabled for console sign-in; none: nothing shown. */
export function ProviderSignIn(props: { error: ApiFailure | null }) {
  const [providers, setProviders] = useState<SignInProvider[]>([])
  const action = useAction()
  useEffect(() => {
    api<{ data: SignInProvider[] }>('GET', '/auth/sso/providers').then(
      (answer) => setProviders(answer.data),
      () => setProviders([]),
    )
  }, [])
  const start = (provider: SignInProvider) =>
    void action.run(async () => {
      const { authorization_url } = await api<{ authorization_url: string }>(
        'POST',
        '/auth/sso/start',
        { provider_id: provider.id },
      )
      window.location.assign(authorization_url)
    })
  if (providers.length === 0 && !props.error) return null
  return (
    <section class="provider-sign-in" aria-label="Sign in with an identity provider">
      <ActionError error={action.error ?? props.error} />
      {providers.map((p) => (
        <button key={p.id} type="button" disabled={action.busy} onClick={() => start(p)}>
          Sign in with {p.name}
        </button>
      ))}
    </section>
  )
}
