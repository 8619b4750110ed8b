import { useEffect, useState } from 'preact/hooks'
import { api, type Page, queryString } from '../api'
import type { Datasource, QueryAuditEntry, User } from '../types'
import { instant } from '../ui/format'
import { Select, TextField } from '../ui/forms'
import { PagerFor, useOptions } from '../ui/paged'
import type { Route } from '../ui/router'
import { Show, useLoad } from '../ui/states'

interface AppliedPolicy {
  policy_id: string
  version: number
  name: string
  decision: { result?: { fire: boolean }; error?: string | null } | null
}

function applied(entry: QueryAuditEntry): AppliedPolicy[] {
  try {
    const list = JSON.parse(entry.policies_applied)
    return Array.isArray(list) ? list : []
  } catch {
    return []
  }
}

/**
 * An entry's own address, for a link or a new tab: its id and its time, which pins it down with
 * the list's own filters (`from` and `to` are inclusive), since the API reads entries by list.
 */
function entryLink(entry: QueryAuditEntry): string {
  return `#/audit/queries${queryString({ entry: entry.id, at: entry.created_at })}`
}

/** The entry an address names (`?entry=…&at=…`), once loaded. */
function useLinkedEntry(route: Route, show: (entry: QueryAuditEntry) => void): void {
  const id = route.query.get('entry')
  const at = route.query.get('at')
  useEffect(() => {
    if (!id || !at) return
    api<Page<QueryAuditEntry>>(
      'GET',
      `/audit/queries${queryString({ from: at, to: at, page_size: 200 })}`,
    )
      .then((p) => {
        const found = p.data.find((e) => e.id === id)
        if (found) show(found)
      })
      .catch(() => undefined)
  }, [id, at])
}

export function QueryAuditPage(props: { route: Route }) {
  const users = useOptions<User>(
    '/users',
    (u) => u.username,
    (u) => u.id,
  )
  const datasources = useOptions<Datasource>(
    '/datasources',
    (d) => d.name,
    (d) => d.id,
  )
  const [userId, setUserId] = useState(props.route.query.get('user_id') ?? '')
  const [dsId, setDsId] = useState(props.route.query.get('datasource_id') ?? '')
  const [status, setStatus] = useState('')
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<QueryAuditEntry | null>(null)
  useLinkedEntry(props.route, setOpen)
  const filters = {
    user_id: userId || undefined,
    datasource_id: dsId || undefined,
    status: status || undefined,
    from: instant(from),
    to: instant(to),
  }
  const list = useLoad(
    () =>
      api<Page<QueryAuditEntry>>(
        'GET',
        `/audit/queries${queryString({ ...filters, page, page_size: 25 })}`,
      ),
    [JSON.stringify(filters), page],
  )
  const refilter = (set: (v: string) => void) => (v: string) => {
    set(v)
    setPage(1)
  }
  return (
    <section>
      <h1 tabIndex={-1}>Query audit</h1>
      <div class="filters">
        <Select
          label="User"
          name="filter-user"
          value={userId}
          options={[['', 'any'], ...users]}
          onChange={refilter(setUserId)}
        />
        <Select
          label="Datasource"
          value={dsId}
          options={[['', 'any'], ...datasources]}
          onChange={refilter(setDsId)}
        />
        <Select
          label="Status"
          name="filter-status"
          value={status}
          options={[['', 'any'], 'success', 'error', 'denied']}
          onChange={refilter(setStatus)}
        />
        <TextField label="From" type="datetime-local" value={from} onChange={refilter(setFrom)} />
        <TextField label="To" type="datetime-local" value={to} onChange={refilter(setTo)} />
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <Show
        result={list}
        what="the query audit"
        isEmpty={(p) => p.total === 0}
        empty="No statements match."
      >
        {(p) => (
          <>
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">User</th>
                  <th scope="col">Datasource</th>
                  <th scope="col">Status</th>
                  <th scope="col">Statement</th>
                  <th scope="col">ms</th>
                </tr>
              </thead>
              <tbody>
                {p.data.map((e) => (
                  <tr key={e.id} class={open?.id === e.id ? 'selected' : ''}>
                    <td>{new Date(e.created_at).toLocaleString()}</td>
                    <td>{e.username}</td>
                    <td>{e.datasource_name}</td>
                    <td>
                      <span class={`status status-${e.status}`}>{e.status}</span>
                    </td>
                    <td>
                      <button
                        type="button"
                        class="link sql"
                        onClick={() => setOpen(e)}
                        aria-expanded={open?.id === e.id}
                      >
                        {e.original_query.length > 80
                          ? `${e.original_query.slice(0, 80)}…`
                          : e.original_query}
                      </button>
                    </td>
                    <td>{e.execution_time_ms ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <PagerFor page={p} onPage={setPage} />
          </>
        )}
      </Show>
      {open && <QueryDetail entry={open} onClose={() => setOpen(null)} />}
    </section>
  )
}

function QueryDetail(props: { entry: QueryAuditEntry; onClose: () => void }) {
  const { entry } = props
  const policies = applied(entry)
  return (
    <section class="card detail" aria-label="Statement detail">
      <h2>
        Statement by {entry.username} on {entry.datasource_name}{' '}
        <button type="button" class="link" onClick={props.onClose}>
          Close
        </button>{' '}
        <a href={entryLink(entry)}>Link to this statement</a>
      </h2>
      <p>
        {new Date(entry.created_at).toLocaleString()}:{' '}
        <span class={`status status-${entry.status}`}>{entry.status}</span>
        {entry.execution_time_ms !== null && `, ${entry.execution_time_ms} ms`}
        {entry.client_info && `, client ${entry.client_info}`}
      </p>
      {entry.error_message && (
        <p class="state error">
          <strong>Error:</strong> {entry.error_message}
        </p>
      )}
      <div class="side-by-side">
        <div>
          <h3>Original</h3>
          <pre data-testid="original-sql">{entry.original_query}</pre>
        </div>
        <div>
          <h3>Rewritten (sent upstream)</h3>
          <pre data-testid="rewritten-sql">
            {entry.rewritten_query ?? '(rejected before rewriting)'}
          </pre>
        </div>
      </div>
      {entry.shadow_policies && (
        <>
          <h3>Shadow policies (not applied)</h3>
          <p>
            {applied({ ...entry, policies_applied: entry.shadow_policies })
              .map((p) => `${p.name} v${p.version}`)
              .join(', ') || 'none matched'}
            {entry.shadow_denied ? '; enforcing them would have refused this statement.' : '.'}
          </p>
        </>
      )}
      <h3>Policies applied</h3>
      {policies.length === 0 ? (
        <p class="state empty">No policy matched the tables this statement read.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Version</th>
              <th scope="col">Decision</th>
            </tr>
          </thead>
          <tbody>
            {policies.map((p) => (
              <tr key={p.policy_id}>
                <td>{p.name}</td>
                <td>{p.version}</td>
                <td>
                  {p.decision === null
                    ? 'fired (no decision function)'
                    : p.decision.result?.fire
                      ? 'fired'
                      : 'skipped by its decision function'}
                  {p.decision?.error ? ` (error: ${p.decision.error})` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
