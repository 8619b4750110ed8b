import { useState } from 'preact/hooks'
import { ApiFailure, api } from '../api'
import type { IdentityProvider, User, UserIdentity } from '../types'
import { ActionError, Select, TextField, useAction } from '../ui/forms'
import { useOptions } from '../ui/paged'
import { Link } from '../ui/router'
import { Show, useLoad } from '../ui/states'

/** The user's link, or null: the API answers 404 for a user not linked yet. */
async function loadLink(userId: string): Promise<UserIdentity | null> {
  try {
    return await api<UserIdentity>('GET', `/users/${userId}/identity`)
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 404) return null
    throw e
  }
}

/**
 * The user's identity provider subject (docs/sso.md#linking-users-ahead-of-their-first-login):
 * set ahead of the first login so only that subject logs in as this user, or removed so the next
 * login links again.
 */
export function UserIdentityLink(props: { user: User }) {
  const path = `/users/${props.user.id}/identity`
  const link = useLoad(() => loadLink(props.user.id), [props.user.id])
  const providers = useOptions<IdentityProvider>(
    '/identity-providers',
    (p) => p.name,
    (p) => p.id,
  )
  const [providerId, setProviderId] = useState('')
  const [subject, setSubject] = useState('')
  const action = useAction()
  const save = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await api('PUT', path, {
        identity_provider_id: providerId || providers[0]?.[0],
        subject,
      })
      setSubject('')
      link.reload()
    })
  }
  const remove = () =>
    action.run(async () => {
      await api('DELETE', path)
      link.reload()
    })
  const providerName = (id: string) => providers.find(([value]) => value === id)?.[1] ?? id
  return (
    <div class="card">
      <h2>Identity provider link</h2>
      <Show result={link} what="the link">
        {(current) =>
          current ? (
            <p data-testid="identity-link">
              Linked to{' '}
              <Link to={`/identity-providers/${current.identity_provider_id}`}>
                {providerName(current.identity_provider_id)}
              </Link>{' '}
              as subject <code>{current.subject}</code>{' '}
              <button type="button" class="link" onClick={remove} disabled={action.busy}>
                Remove link
              </button>
            </p>
          ) : (
            <p data-testid="identity-link">Not linked: the first token login or sign-in links.</p>
          )
        }
      </Show>
      {providers.length > 0 && (
        <form onSubmit={save} class="inline">
          <Select
            label="Provider"
            value={providerId || (providers[0]?.[0] ?? '')}
            options={providers}
            onChange={setProviderId}
          />
          <TextField label="Subject (the provider's sub)" value={subject} onChange={setSubject} />
          <button type="submit" disabled={action.busy}>
            Save link
          </button>
        </form>
      )}
      <ActionError error={action.error} />
    </div>
  )
}
