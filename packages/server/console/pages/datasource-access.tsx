import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Datasource, Role, User } from '../types'
import { ActionError, Checkbox, useAction } from '../ui/forms'
import { useOptions } from '../ui/paged'
import { Show, useLoad } from '../ui/states'

interface AccessSummary {
  all: boolean
  users: { id: string; username: string }[]
  roles: { id: string; name: string; is_active: boolean }[]
}

export function DatasourceAccess(props: { ds: Datasource }) {
  const access = useLoad(
    () => api<AccessSummary>('GET', `/datasources/${props.ds.id}/access`),
    [props.ds.id],
  )
  return (
    <div class="card">
      <h2>Who may connect</h2>
      <Show result={access} what="access">
        {(a) => (
          <AccessLists key={JSON.stringify(a)} ds={props.ds} access={a} onFailed={access.reload} />
        )}
      </Show>
    </div>
  )
}

/**
 * The three access scopes as checkboxes. A tick shows at once and is saved behind it (each list
 * is replaced whole, as the API takes it); a refused save reloads what the server holds.
 */
function AccessLists(props: { ds: Datasource; access: AccessSummary; onFailed: () => void }) {
  const users = useOptions<User>(
    '/users',
    (u) => u.username,
    (u) => u.id,
  )
  const roles = useOptions<Role>(
    '/roles',
    (r) => r.name,
    (r) => r.id,
  )
  const [all, setAllState] = useState(props.access.all)
  const [userIds, setUserIds] = useState(props.access.users.map((u) => u.id))
  const [roleIds, setRoleIds] = useState(props.access.roles.map((r) => r.id))
  const action = useAction()
  const base = `/datasources/${props.ds.id}`
  const save = (write: () => Promise<unknown>) =>
    action.run(async () => {
      try {
        await write()
      } catch (e) {
        props.onFailed()
        throw e
      }
    })
  const setAll = (enabled: boolean) => {
    setAllState(enabled)
    void save(() => api('PUT', `${base}/access/all`, { enabled }))
  }
  const toggle = (list: string[], id: string, on: boolean) =>
    on ? [...list.filter((x) => x !== id), id] : list.filter((x) => x !== id)
  const setUser = (id: string, on: boolean) => {
    const next = toggle(userIds, id, on)
    setUserIds(next)
    void save(() => api('PUT', `${base}/users`, { user_ids: next }))
  }
  const setRole = (id: string, on: boolean) => {
    const next = toggle(roleIds, id, on)
    setRoleIds(next)
    void save(() => api('PUT', `${base}/access/roles`, { role_ids: next }))
  }
  return (
    <>
      <Checkbox label="Every user" checked={all} onChange={setAll} />
      <fieldset>
        <legend>Users</legend>
        {users.length === 0 && <p class="state empty">No users.</p>}
        {users.map(([id, name]) => (
          <Checkbox
            key={id}
            label={name}
            name={`access-user-${name}`}
            checked={userIds.includes(id)}
            onChange={(on) => setUser(id, on)}
          />
        ))}
      </fieldset>
      <fieldset>
        <legend>Roles</legend>
        {roles.length === 0 && <p class="state empty">No roles.</p>}
        {roles.map(([id, name]) => (
          <Checkbox
            key={id}
            label={name}
            name={`access-role-${name}`}
            checked={roleIds.includes(id)}
            onChange={(on) => setRole(id, on)}
          />
        ))}
      </fieldset>
      {action.busy && <p role="status">Saving…</p>}
      <ActionError error={action.error} />
    </>
  )
}
