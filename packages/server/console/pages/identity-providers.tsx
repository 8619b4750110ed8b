import { api } from '../api'
import type { IdentityProvider } from '../types'
import { DeleteCard } from '../ui/delete-card'
import { TextField } from '../ui/forms'
import { PagerFor, usePaged } from '../ui/paged'
import { Link, navigate } from '../ui/router'
import { Show, useLoad } from '../ui/states'
import { IdentityProviderForm } from './identity-provider-form'

/** OpenID Connect providers for token logins and console sign-in (docs/sso.md). */
export function IdentityProvidersPage() {
  const list = usePaged<IdentityProvider>('/identity-providers')
  const create = async (body: Record<string, unknown>) => {
    const provider = await api<IdentityProvider>('POST', '/identity-providers', body)
    navigate(`/identity-providers/${provider.id}`)
  }
  return (
    <section>
      <h1 tabIndex={-1}>Identity providers</h1>
      <IdentityProviderForm
        title="New identity provider"
        submitLabel="Create identity provider"
        save={create}
      />
      <h2>All identity providers</h2>
      <TextField
        label="Search identity providers"
        type="search"
        value={list.search}
        onChange={list.setSearch}
      />
      <Show
        result={list.result}
        what="identity providers"
        isEmpty={(p) => p.total === 0}
        empty="No identity providers yet."
      >
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Issuer</th>
                  <th scope="col">Console sign-in</th>
                  <th scope="col">JIT users</th>
                  <th scope="col">Active</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link to={`/identity-providers/${p.id}`}>{p.name}</Link>
                    </td>
                    <td>{p.issuer}</td>
                    <td>{p.console_sign_in ? 'on' : 'off'}</td>
                    <td>{p.jit_users ? 'yes' : 'no'}</td>
                    <td>{p.is_active ? 'yes' : 'no'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <PagerFor page={page} onPage={list.setPage} />
          </>
        )}
      </Show>
    </section>
  )
}

export function IdentityProviderPage(props: { id: string }) {
  const path = `/identity-providers/${props.id}`
  const provider = useLoad(() => api<IdentityProvider>('GET', path), [path])
  return (
    <section>
      <Show result={provider} what="the identity provider">
        {(p) => (
          <>
            <h1 tabIndex={-1}>Identity provider {p.name}</h1>
            <IdentityProviderForm
              // A new form after each save, so its fields start from what the API stored.
              key={p.updated_at}
              provider={p}
              title="Settings"
              submitLabel="Save identity provider"
              save={async (body) => {
                await api('PUT', path, body)
                provider.reload()
              }}
            />
            <DeleteCard
              label="Delete identity provider"
              question={() =>
                `Delete identity provider ${p.name}? Its tokens are refused from now on, and the role memberships its claims granted are removed.`
              }
              path={path}
              back="/identity-providers"
            />
          </>
        )}
      </Show>
    </section>
  )
}
