import { useState } from 'preact/hooks'
import { api, setToken } from '../api'
import type { User } from '../types'
import { ActionError, TextField, useAction } from '../ui/forms'

/** The admin API's own login; the token lives in this page's memory only. */
export function SignInPage(props: { onSignedIn: (user: User) => void }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      const answer = await api<{ token: string; user: User }>('POST', '/auth/login', {
        username,
        password,
      })
      setToken(answer.token)
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
      </form>
    </main>
  )
}
