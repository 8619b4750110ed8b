import { useState } from 'preact/hooks'
import { api, type Page } from '../api'
import type { AttributeDefinition, RoleRef, User } from '../types'
import { DeleteCard } from '../ui/delete-card'
import { ActionError, Checkbox, Select, TextField, useAction } from '../ui/forms'
import { PagerFor, useOptions, usePaged } from '../ui/paged'
import { Link, navigate } from '../ui/router'
import { Show, useLoad } from '../ui/states'
import { LimitsCard } from './limits-card'
import { UserAccess } from './user-access'
import { UserIdentityLink } from './user-identity'

export function UsersPage() {
  const list = usePaged<User>('/users')
  return (
    <section>
      <h1 tabIndex={-1}>Users</h1>
      <CreateUser />
      <h2>All users</h2>
      <TextField label="Search users" type="search" value={list.search} onChange={list.setSearch} />
      <Show
        result={list.result}
        what="users"
        isEmpty={(p) => p.total === 0}
        empty="No users match."
      >
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Username</th>
                  <th scope="col">Name</th>
                  <th scope="col">Admin</th>
                  <th scope="col">Active</th>
                  <th scope="col">Last login</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((u) => (
                  <tr key={u.id}>
                    <td>
                      <Link to={`/users/${u.id}`}>{u.username}</Link>
                    </td>
                    <td>{u.display_name ?? ''}</td>
                    <td>{u.is_admin ? 'yes' : ''}</td>
                    <td>{u.is_active ? 'yes' : 'no'}</td>
                    <td>
                      {u.last_login_at ? new Date(u.last_login_at).toLocaleString() : 'never'}
                    </td>
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

function CreateUser() {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [email, setEmail] = useState('')
  const [isAdmin, setIsAdmin] = useState(false)
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      const user = await api<User>('POST', '/users', {
        username,
        password,
        email: email || null,
        is_admin: isAdmin,
      })
      navigate(`/users/${user.id}`)
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>New user</h2>
      <div class="row">
        <TextField label="Username" name="new-username" value={username} onChange={setUsername} />
        <TextField
          label="Password"
          name="new-password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={setPassword}
          hint="8+ characters: upper, lower, digit and symbol"
        />
        <TextField label="Email" name="new-email" value={email} onChange={setEmail} />
      </div>
      <Checkbox label="Admin (admin API and console)" checked={isAdmin} onChange={setIsAdmin} />
      <ActionError error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Create user
      </button>
    </form>
  )
}

export function UserPage(props: { id: string }) {
  const user = useLoad(() => api<User>('GET', `/users/${props.id}`), [props.id])
  return (
    <section>
      <Show result={user} what="the user">
        {(u) => (
          <>
            <h1 tabIndex={-1}>User {u.username}</h1>
            <EditUser user={u} onSaved={user.reload} />
            <UserAttributes user={u} onSaved={user.reload} />
            <LimitsCard path={`/users/${u.id}`} limits={u.limits} onSaved={user.reload} effective />
            <UserRoles user={u} />
            <UserIdentityLink user={u} />
            <UserAccess user={u} />
            <SetPassword user={u} />
            <DeleteUser user={u} />
          </>
        )}
      </Show>
    </section>
  )
}

function EditUser(props: { user: User; onSaved: () => void }) {
  const { user } = props
  const [displayName, setDisplayName] = useState(user.display_name ?? '')
  const [email, setEmail] = useState(user.email ?? '')
  const [isAdmin, setIsAdmin] = useState(user.is_admin)
  const [isActive, setIsActive] = useState(user.is_active)
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await api('PATCH', `/users/${user.id}`, {
        display_name: displayName || null,
        email: email || null,
        is_admin: isAdmin,
        is_active: isActive,
      })
      props.onSaved()
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>Profile</h2>
      <div class="row">
        <TextField label="Display name" value={displayName} onChange={setDisplayName} />
        <TextField label="Email" value={email} onChange={setEmail} />
      </div>
      <Checkbox label="Admin" checked={isAdmin} onChange={setIsAdmin} />
      <Checkbox
        label="Active (can sign in on either plane)"
        checked={isActive}
        onChange={setIsActive}
      />
      <ActionError error={action.error} />
      <button type="submit" disabled={action.busy}>
        Save profile
      </button>
    </form>
  )
}

/** Attribute values, one input per user attribute definition (lists as comma-separated text). */
function UserAttributes(props: { user: User; onSaved: () => void }) {
  const defs = useLoad(
    () =>
      api<Page<AttributeDefinition>>(
        'GET',
        '/attribute-definitions?entity_type=user&page_size=200',
      ),
    [],
  )
  const initial = (def: AttributeDefinition) => {
    const value = props.user.attributes[def.key]
    if (value === undefined || value === null) return ''
    return Array.isArray(value) ? value.join(', ') : String(value)
  }
  const [values, setValues] = useState<Record<string, string>>({})
  const action = useAction()
  return (
    <Show
      result={defs}
      what="attribute definitions"
      isEmpty={(p) => p.data.length === 0}
      empty="No user attributes are defined yet (see Attributes)."
    >
      {(page) => {
        const submit = (e: Event) => {
          e.preventDefault()
          const attributes: Record<string, unknown> = {}
          for (const def of page.data) {
            const text = values[def.key] ?? initial(def)
            if (text.trim() === '') continue
            attributes[def.key] =
              def.value_type === 'list'
                ? text
                    .split(',')
                    .map((s) => s.trim())
                    .filter(Boolean)
                : text
          }
          void action.run(async () => {
            await api('PATCH', `/users/${props.user.id}`, { attributes })
            props.onSaved()
          })
        }
        return (
          <form class="card" onSubmit={submit}>
            <h2>Attributes</h2>
            <div class="row">
              {page.data.map((def) => (
                <TextField
                  key={def.key}
                  label={`${def.display_name} (${def.key}, ${def.value_type})`}
                  name={`attr-${def.key}`}
                  value={values[def.key] ?? initial(def)}
                  onChange={(v) => setValues({ ...values, [def.key]: v })}
                />
              ))}
            </div>
            <ActionError error={action.error} />
            <button type="submit" disabled={action.busy}>
              Save attributes
            </button>
          </form>
        )
      }}
    </Show>
  )
}

function UserRoles(props: { user: User }) {
  const roles = useLoad(
    () => api<RoleRef[]>('GET', `/users/${props.user.id}/roles`),
    [props.user.id],
  )
  const options = useOptions<RoleRef>(
    '/roles',
    (r) => r.name,
    (r) => r.id,
  )
  const [roleId, setRoleId] = useState('')
  const action = useAction()
  const add = (e: Event) => {
    e.preventDefault()
    const chosen = roleId || options[0]?.[0]
    if (!chosen) return
    void action.run(async () => {
      await api('POST', `/roles/${chosen}/members`, { user_ids: [props.user.id] })
      roles.reload()
    })
  }
  const remove = (role: RoleRef) =>
    action.run(async () => {
      await api('DELETE', `/roles/${role.id}/members/${props.user.id}`)
      roles.reload()
    })
  return (
    <div class="card">
      <h2>Roles</h2>
      <Show
        result={roles}
        what="roles"
        isEmpty={(r) => r.length === 0}
        empty="Not a member of any role."
      >
        {(list) => (
          <ul>
            {list.map((r) => (
              <li key={r.id}>
                <Link to={`/roles/${r.id}`}>{r.name}</Link>
                {r.is_active ? '' : ' (inactive)'}{' '}
                <button type="button" class="link" onClick={() => remove(r)}>
                  Remove from {r.name}
                </button>
              </li>
            ))}
          </ul>
        )}
      </Show>
      {options.length > 0 && (
        <form onSubmit={add} class="inline">
          <Select
            label="Add to role"
            value={roleId || (options[0]?.[0] ?? '')}
            options={options}
            onChange={setRoleId}
          />
          <button type="submit" disabled={action.busy}>
            Add
          </button>
        </form>
      )}
      <ActionError error={action.error} />
    </div>
  )
}

function SetPassword(props: { user: User }) {
  const [password, setPassword] = useState('')
  const [done, setDone] = useState(false)
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    setDone(false)
    void action.run(async () => {
      await api('PUT', `/users/${props.user.id}/password`, { password })
      setPassword('')
      setDone(true)
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>Password</h2>
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={setPassword}
      />
      <ActionError error={action.error} />
      {done && <p role="status">Password changed.</p>}
      <button type="submit" disabled={action.busy}>
        Set password
      </button>
    </form>
  )
}

function DeleteUser(props: { user: User }) {
  return (
    <DeleteCard
      label="Delete user"
      question={() => `Delete user ${props.user.username}? Their sessions end at once.`}
      path={`/users/${props.user.id}`}
      back="/users"
    />
  )
}
