import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Datasource, User } from '../types'
import { Select } from '../ui/forms'
import { useOptions } from '../ui/paged'
import { Show, useLoad } from '../ui/states'

/** Effective policies of the user on one datasource (which assignments reach them, and how). */
export function UserAccess(props: { user: User }) {
  const datasources = useOptions<Datasource>(
    '/datasources',
    (d) => d.name,
    (d) => d.id,
  )
  const [dsId, setDsId] = useState('')
  const chosen = dsId || datasources[0]?.[0] || ''
  const effective = useLoad(
    () =>
      chosen
        ? api<
            {
              assignment_id: string
              policy_name: string
              policy_type: string
              version: number
              source: string
              priority: number
              applies: boolean
            }[]
          >('GET', `/users/${props.user.id}/effective-policies?datasource_id=${chosen}`)
        : Promise.resolve([]),
    [props.user.id, chosen],
  )
  return (
    <div class="card">
      <h2>Policies by datasource</h2>
      {datasources.length === 0 ? (
        <p class="state empty">No datasources yet.</p>
      ) : (
        <>
          <Select label="Datasource" value={chosen} options={datasources} onChange={setDsId} />
          <Show
            result={effective}
            what="effective policies"
            isEmpty={(l) => l.length === 0}
            empty="No policy reaches this user on this datasource."
          >
            {(list) => (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Policy</th>
                    <th scope="col">Type</th>
                    <th scope="col">Version</th>
                    <th scope="col">Through</th>
                    <th scope="col">Priority</th>
                    <th scope="col">Applies</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((p) => (
                    <tr key={p.assignment_id}>
                      <td>{p.policy_name}</td>
                      <td>{p.policy_type}</td>
                      <td>{p.version}</td>
                      <td>{p.source}</td>
                      <td>{p.priority}</td>
                      <td>{p.applies ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Show>
        </>
      )}
    </div>
  )
}
