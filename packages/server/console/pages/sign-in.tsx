import { useState } from 'preact/hooks'
import { type ApiFailure, api, type Session, setSession } from '../api'
import type { User } from '../types'
import { ActionError, TextField, useAction } from '../ui/forms'
import { ProviderSignIn } from './sso-sign-in'

/**
 * The admin API's console sign-in: the token goes into an HttpOnly cookie, not to this page.
 * Identity providers enabled for console sign-in get a button each; the password form stays,
 * for local admins (the break-glass account). `providerError`: a refused provider sign-in.
 */
export function SignInPage(props: {
  onSignedIn: (user: User) => void
  providerError?: ApiFailure | null
}) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      const answer = await api<Session>('POST', '/auth/session', { username, password })
      setSession(answer)
      props.onSignedIn(answer.user)
    })
  }
  return (
    <main class="sign-in">
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Palisade console</h1>
        <p>Sign in with an admin account.</p>
        <TextField
          label="Username"
          name="username"
          autoComplete="username"
          value={username}
          onChange={setUsername}
          required
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={setPassword}
          required
        />
        <ActionError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ProviderSignIn error={props.providerError ?? null} />
      </form>
    </main>
  )
}
