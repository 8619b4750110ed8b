import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Assignment, Datasource, Policy, Role, User } from '../types'
import { assignmentScope } from '../ui/format'
import { ActionError, Select, TextField, useAction } from '../ui/forms'
import { useOptions } from '../ui/paged'
import { Link } from '../ui/router'

export function PolicyAssignments(props: { policy: Policy; onChanged: () => void }) {
  const datasources = useOptions<Datasource>(
    '/datasources',
    (d) => d.name,
    (d) => d.id,
  )
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
  const [dsId, setDsId] = useState('')
  const [scope, setScope] = useState('all')
  const [subject, setSubject] = useState('')
  const [priority, setPriority] = useState('100')
  const action = useAction()
  const ds = dsId || datasources[0]?.[0] || ''
  const subjects = scope === 'user' ? users : scope === 'role' ? roles : []
  const who = subject || subjects[0]?.[0] || ''
  const assign = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await api('POST', `/datasources/${ds}/policies`, {
        policy_id: props.policy.id,
        scope,
        ...(scope === 'user' ? { user_id: who } : {}),
        ...(scope === 'role' ? { role_id: who } : {}),
        priority: Number(priority),
      })
      props.onChanged()
    })
  }
  const unassign = (a: Assignment) =>
    action.run(async () => {
      await api('DELETE', `/datasources/${a.datasource_id}/policies/${a.id}`)
      props.onChanged()
    })
  const list = props.policy.assignments ?? []
  return (
    <div class="card">
      <h2>Assignments</h2>
      {list.length === 0 ? (
        <p class="state empty">Not assigned: this policy has no effect yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Datasource</th>
              <th scope="col">Scope</th>
              <th scope="col">Priority</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((a) => (
              <tr key={a.id}>
                <td>
                  <Link to={`/datasources/${a.datasource_id}`}>{a.datasource_name}</Link>
                </td>
                <td>{assignmentScope(a)}</td>
                <td>{a.priority}</td>
                <td>
                  <button type="button" class="link" onClick={() => unassign(a)}>
                    Unassign from {a.datasource_name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {datasources.length === 0 ? (
        <p class="state empty">Create a datasource to assign this policy.</p>
      ) : (
        <form class="inline" onSubmit={assign}>
          <Select
            label="Datasource"
            name="assign-datasource"
            value={ds}
            options={datasources}
            onChange={setDsId}
          />
          <Select
            label="Scope"
            name="assign-scope"
            value={scope}
            options={[
              ['all', 'all users'],
              ['role', 'a role'],
              ['user', 'a user'],
            ]}
            onChange={(v) => {
              setScope(v)
              setSubject('')
            }}
          />
          {scope !== 'all' && (
            <Select
              label={scope === 'user' ? 'User' : 'Role'}
              name="assign-subject"
              value={who}
              options={subjects}
              onChange={setSubject}
            />
          )}
          <TextField label="Priority" type="number" value={priority} onChange={setPriority} />
          <button type="submit" disabled={action.busy}>
            Assign
          </button>
        </form>
      )}
      <ActionError error={action.error} />
    </div>
  )
}
