import { useState } from 'preact/hooks'
import { api } from '../api'
import type { AccessRequest } from '../types'
import { ActionError, Select, TextField, useAction } from '../ui/forms'
import { PagerFor, usePaged } from '../ui/paged'
import { Link } from '../ui/router'
import { Show } from '../ui/states'

const STATUSES = ['pending', 'approved', 'denied', 'cancelled'] as const

/** Seconds as the largest whole unit that fits ("8 h", "90 min", "2 d"). */
export function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`
  if (seconds % 3600 === 0) return `${seconds / 3600} h`
  if (seconds % 60 === 0) return `${seconds / 60} min`
  return `${seconds} s`
}

/** Users' requests for time-bound access; an admin approves (possibly for less time) or denies. */
export function AccessRequestsPage() {
  const [status, setStatus] = useState('pending')
  const list = usePaged<AccessRequest>('/access-requests', { status: status || undefined }, 20)
  return (
    <section>
      <h1 tabIndex={-1}>Access requests</h1>
      <p>
        Users ask for a role or a datasource for a while with their own credentials (
        <code>POST /api/v1/access-requests</code>); approving grants it until the time shown, then
        it expires by itself.
      </p>
      <div class="filters">
        <Select
          label="Status"
          value={status}
          options={[['', 'all'], ...STATUSES.map((s) => [s, s] as [string, string])]}
          onChange={setStatus}
        />
      </div>
      <Show
        result={list.result}
        isEmpty={(p) => p.total === 0}
        empty={status === 'pending' ? 'No pending requests.' : 'No requests.'}
      >
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Requested</th>
                  <th scope="col">User</th>
                  <th scope="col">For</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Status</th>
                  <th scope="col">Decision</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((r) => (
                  <RequestRow key={r.id} request={r} onChanged={list.result.reload} />
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

function RequestRow(props: { request: AccessRequest; onChanged: () => void }) {
  const r = props.request
  const [hours, setHours] = useState('')
  const [comment, setComment] = useState('')
  const action = useAction()
  const decide = (verdict: 'approve' | 'deny') =>
    action.run(async () => {
      const body: Record<string, unknown> = { comment: comment || null }
      if (verdict === 'approve' && hours)
        body['duration_seconds'] = Math.round(Number(hours) * 3600)
      await api('POST', `/access-requests/${r.id}/${verdict}`, body)
      props.onChanged()
    })
  const target =
    r.kind === 'role' ? (
      <Link to={`/roles/${r.role_id}`}>role {r.role_name}</Link>
    ) : (
      <Link to={`/datasources/${r.datasource_id}`}>datasource {r.datasource_name}</Link>
    )
  return (
    <tr>
      <td>{new Date(r.created_at).toLocaleString()}</td>
      <td>
        <Link to={`/users/${r.user_id}`}>{r.username}</Link>
      </td>
      <td>{target}</td>
      <td>{duration(r.duration_seconds)}</td>
      <td>{r.reason}</td>
      <td>{r.status}</td>
      <td>
        {r.status === 'pending' ? (
          <div class="inline">
            <TextField
              label={`Hours to grant ${r.username} (blank: as requested)`}
              type="number"
              value={hours}
              onChange={setHours}
            />
            <TextField label={`Comment for ${r.username}`} value={comment} onChange={setComment} />
            <button type="button" disabled={action.busy} onClick={() => decide('approve')}>
              Approve {r.username}
            </button>
            <button type="button" disabled={action.busy} onClick={() => decide('deny')}>
              Deny {r.username}
            </button>
            <ActionError error={action.error} />
          </div>
        ) : (
          <span>
            {r.granted_until ? `until ${new Date(r.granted_until).toLocaleString()}` : ''}
            {r.decision_comment ? ` — ${r.decision_comment}` : ''}
          </span>
        )}
      </td>
    </tr>
  )
}
