import { useState } from 'preact/hooks'
import { api } from '../api'
import type { EffectiveMember, Role, RoleDetail, User } from '../types'
import { DeleteCard } from '../ui/delete-card'
import { instant } from '../ui/format'
import { ActionError, Checkbox, Select, TextField, useAction } from '../ui/forms'
import { PagerFor, useOptions, usePaged } from '../ui/paged'
import { Link, navigate } from '../ui/router'
import { Show, useLoad } from '../ui/states'
import { LimitsCard } from './limits-card'

export function RolesPage() {
  const list = usePaged<Role>('/roles')
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const action = useAction()
  const create = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      const role = await api<Role>('POST', '/roles', { name, description: description || null })
      navigate(`/roles/${role.id}`)
    })
  }
  return (
    <section>
      <h1 tabIndex={-1}>Roles</h1>
      <form class="card" onSubmit={create}>
        <h2>New role</h2>
        <div class="row">
          <TextField label="Role name" name="role-name" value={name} onChange={setName} />
          <TextField label="Description" value={description} onChange={setDescription} />
        </div>
        <ActionError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create role
        </button>
      </form>
      <h2>All roles</h2>
      <TextField label="Search roles" type="search" value={list.search} onChange={list.setSearch} />
      <Show result={list.result} what="roles" isEmpty={(p) => p.total === 0} empty="No roles yet.">
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Direct members</th>
                  <th scope="col">Active</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link to={`/roles/${r.id}`}>{r.name}</Link>
                    </td>
                    <td>{r.description ?? ''}</td>
                    <td>{r.direct_member_count}</td>
                    <td>{r.is_active ? 'yes' : 'no'}</td>
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

export function RolePage(props: { id: string }) {
  const role = useLoad(() => api<RoleDetail>('GET', `/roles/${props.id}`), [props.id])
  return (
    <section>
      <Show result={role} what="the role">
        {(r) => (
          <>
            <h1 tabIndex={-1}>Role {r.name}</h1>
            <RoleSettings role={r} onSaved={role.reload} />
            <LimitsCard path={`/roles/${r.id}`} limits={r.limits} onSaved={role.reload} />
            <RoleMembers role={r} onChanged={role.reload} />
            <RoleParents role={r} onChanged={role.reload} />
            <EffectiveMembers id={r.id} version={r} />
            <RoleReach role={r} />
            <DeleteRole role={r} />
          </>
        )}
      </Show>
    </section>
  )
}

function RoleSettings(props: { role: RoleDetail; onSaved: () => void }) {
  const [description, setDescription] = useState(props.role.description ?? '')
  const [active, setActive] = useState(props.role.is_active)
  const action = useAction()
  const save = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await api('PATCH', `/roles/${props.role.id}`, {
        description: description || null,
        is_active: active,
      })
      props.onSaved()
    })
  }
  return (
    <form class="card" onSubmit={save}>
      <h2>Settings</h2>
      <TextField label="Description" value={description} onChange={setDescription} />
      <Checkbox
        label="Active (an inactive role grants nothing, to its members or its children)"
        checked={active}
        onChange={setActive}
      />
      <ActionError error={action.error} />
      <button type="submit" disabled={action.busy}>
        Save role
      </button>
    </form>
  )
}

function RoleMembers(props: { role: RoleDetail; onChanged: () => void }) {
  const users = useOptions<User>(
    '/users',
    (u) => u.username,
    (u) => u.id,
  )
  const [userId, setUserId] = useState('')
  const [until, setUntil] = useState('')
  const action = useAction()
  const chosen = userId || users[0]?.[0] || ''
  const add = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      // With an end time: a time-bound membership, created (or re-windowed) by PUT.
      if (until) {
        await api('PUT', `/roles/${props.role.id}/members/${chosen}`, {
          valid_until: instant(until),
        })
      } else {
        await api('POST', `/roles/${props.role.id}/members`, { user_ids: [chosen] })
      }
      setUntil('')
      props.onChanged()
    })
  }
  const remove = (id: string) =>
    action.run(async () => {
      await api('DELETE', `/roles/${props.role.id}/members/${id}`)
      props.onChanged()
    })
  return (
    <div class="card">
      <h2>Direct members</h2>
      {props.role.members.length === 0 ? (
        <p class="state empty">No direct members.</p>
      ) : (
        <ul>
          {props.role.members.map((m) => (
            <li key={m.id}>
              <Link to={`/users/${m.id}`}>{m.username}</Link>
              {m.valid_from && ` from ${new Date(m.valid_from).toLocaleString()}`}
              {m.valid_until && ` until ${new Date(m.valid_until).toLocaleString()}`}{' '}
              <button type="button" class="link" onClick={() => remove(m.id)}>
                Remove {m.username}
              </button>
            </li>
          ))}
        </ul>
      )}
      {users.length > 0 && (
        <form class="inline" onSubmit={add}>
          <Select
            label="Add member"
            name="member"
            value={chosen}
            options={users}
            onChange={setUserId}
          />
          <TextField
            label="Member until (blank: lasting)"
            type="datetime-local"
            value={until}
            onChange={setUntil}
          />
          <button type="submit" disabled={action.busy}>
            Add member
          </button>
        </form>
      )}
      <ActionError error={action.error} />
    </div>
  )
}

function RoleParents(props: { role: RoleDetail; onChanged: () => void }) {
  const roles = useOptions<Role>(
    '/roles',
    (r) => r.name,
    (r) => r.id,
  ).filter(([id]) => id !== props.role.id)
  const [parentId, setParentId] = useState('')
  const chosen = parentId || roles[0]?.[0] || ''
  const action = useAction()
  const add = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await api('POST', `/roles/${props.role.id}/parents`, { parent_role_id: chosen })
      props.onChanged()
    })
  }
  const remove = (id: string) =>
    action.run(async () => {
      await api('DELETE', `/roles/${props.role.id}/parents/${id}`)
      props.onChanged()
    })
  return (
    <div class="card">
      <h2>Inheritance</h2>
      <p>
        Parents (this role inherits their assignments and access):{' '}
        {props.role.parent_roles.length === 0
          ? 'none'
          : props.role.parent_roles.map((p) => (
              <span key={p.id} class="chip">
                <Link to={`/roles/${p.id}`}>{p.name}</Link>
                <button
                  type="button"
                  class="link"
                  aria-label={`Remove parent ${p.name}`}
                  onClick={() => remove(p.id)}
                >
                  ×
                </button>
              </span>
            ))}
      </p>
      <p>
        Children:{' '}
        {props.role.child_roles.length === 0
          ? 'none'
          : props.role.child_roles.map((c) => (
              <span key={c.id} class="chip">
                <Link to={`/roles/${c.id}`}>{c.name}</Link>
              </span>
            ))}
      </p>
      {roles.length > 0 && (
        <form class="inline" onSubmit={add}>
          <Select label="Add parent role" value={chosen} options={roles} onChange={setParentId} />
          <button type="submit" disabled={action.busy}>
            Add parent
          </button>
        </form>
      )}
      <ActionError error={action.error} />
    </div>
  )
}

function EffectiveMembers(props: { id: string; version: unknown }) {
  const members = useLoad(
    () => api<EffectiveMember[]>('GET', `/roles/${props.id}/effective-members`),
    [props.id, props.version],
  )
  return (
    <div class="card">
      <h2>Effective members</h2>
      <Show
        result={members}
        isEmpty={(m) => m.length === 0}
        empty="Nobody, directly or through child roles."
      >
        {(list) => (
          <ul>
            {list.map((m) => (
              <li key={m.user_id}>
                {m.username} <small>({m.source})</small>
              </li>
            ))}
          </ul>
        )}
      </Show>
    </div>
  )
}

function RoleReach(props: { role: RoleDetail }) {
  const { role } = props
  return (
    <div class="card">
      <h2>Assignments and access</h2>
      {role.policy_assignments.length === 0 ? (
        <p class="state empty">No policy is assigned to this role or its parents.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Datasource</th>
              <th scope="col">Priority</th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {role.policy_assignments.map((a) => (
              <tr key={a.assignment_id}>
                <td>{a.policy_name}</td>
                <td>{a.datasource_name}</td>
                <td>{a.priority}</td>
                <td>{a.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        Datasource access:{' '}
        {role.datasource_access.length === 0
          ? 'none'
          : role.datasource_access.map((d) => `${d.datasource_name} (${d.source})`).join(', ')}
      </p>
    </div>
  )
}

function DeleteRole(props: { role: RoleDetail }) {
  const question = async () => {
    const impact = await api<Record<string, number>>('GET', `/roles/${props.role.id}/impact`)
    const summary = `${impact['affected_users']} users, ${impact['affected_assignments']} assignments, ${impact['affected_datasource_access']} access rows, ${impact['affected_child_roles']} child roles`
    return `Delete role ${props.role.name}? This affects ${summary}.`
  }
  return (
    <DeleteCard
      label="Delete role"
      question={question}
      path={`/roles/${props.role.id}`}
      back="/roles"
    />
  )
}
