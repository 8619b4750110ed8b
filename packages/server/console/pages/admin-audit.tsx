import { Fragment } from 'preact'
import { useState } from 'preact/hooks'
import { api, type Page, queryString } from '../api'
import type { AdminAuditEntry } from '../types'
import { instant } from '../ui/format'
import { Select, TextField } from '../ui/forms'
import { PagerFor } from '../ui/paged'
import { Show, useLoad } from '../ui/states'

const RESOURCE_TYPES = [
  'user',
  'datasource',
  'policy',
  'policy_assignment',
  'role',
  'role_member',
  'role_inheritance',
  'data_source_access',
  'attribute_definition',
  'decision_function',
  'table_relationship',
  'column_anchor',
]
const ACTIONS = [
  'create',
  'update',
  'delete',
  'assign',
  'unassign',
  'add_member',
  'remove_member',
  'add_parent',
  'remove_parent',
  'grant_access',
  'revoke_access',
  'preview',
  'simulate',
]

const show = (value: unknown) => (value === undefined ? '' : JSON.stringify(value))

/** `before`/`after` as a field-by-field table; anything else as indented JSON. */
function Changes(props: { text: string | null }) {
  if (!props.text) return <p class="state empty">No change details.</p>
  let changes: Record<string, unknown>
  try {
    changes = JSON.parse(props.text)
  } catch {
    return <pre>{props.text}</pre>
  }
  const before = changes['before']
  const after = changes['after']
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
  const flags = Object.entries(changes).filter(([k]) => k !== 'before' && k !== 'after')
  if (!isObject(before) && !isObject(after)) return <pre>{JSON.stringify(changes, null, 2)}</pre>
  const b = isObject(before) ? before : {}
  const a = isObject(after) ? after : {}
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()
  return (
    <>
      <table class="diff">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k} class={show(b[k]) === show(a[k]) ? '' : 'changed'}>
              <td>
                <code>{k}</code>
              </td>
              <td>
                <code>{show(b[k])}</code>
              </td>
              <td>
                <code>{show(a[k])}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {flags.length > 0 && (
        <p>
          {flags.map(([k, v]) => (
            <span key={k} class="chip">
              {k}: {show(v)}
            </span>
          ))}
        </p>
      )}
    </>
  )
}

export function AdminAuditPage() {
  const [resourceType, setResourceType] = useState('')
  const [action, setAction] = useState('')
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const [page, setPage] = useState(1)
  const [open, setOpen] = useState<string | null>(null)
  const filters = {
    resource_type: resourceType || undefined,
    action: action || undefined,
    from: instant(from),
    to: instant(to),
  }
  const list = useLoad(
    () =>
      api<Page<AdminAuditEntry>>(
        'GET',
        `/audit/admin${queryString({ ...filters, page, page_size: 25 })}`,
      ),
    [JSON.stringify(filters), page],
  )
  const refilter = (set: (v: string) => void) => (v: string) => {
    set(v)
    setPage(1)
  }
  return (
    <section>
      <h1 tabIndex={-1}>Admin audit</h1>
      <div class="filters">
        <Select
          label="Resource"
          value={resourceType}
          options={[['', 'any'], ...RESOURCE_TYPES.map((t) => [t, t] as [string, string])]}
          onChange={refilter(setResourceType)}
        />
        <Select
          label="Action"
          value={action}
          options={[['', 'any'], ...ACTIONS.map((t) => [t, t] as [string, string])]}
          onChange={refilter(setAction)}
        />
        <TextField label="From" type="datetime-local" value={from} onChange={refilter(setFrom)} />
        <TextField label="To" type="datetime-local" value={to} onChange={refilter(setTo)} />
      </div>
      <Show
        result={list}
        what="the admin audit"
        isEmpty={(p) => p.total === 0}
        empty="No entries match."
      >
        {(p) => (
          <>
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Action</th>
                  <th scope="col">Resource id</th>
                  <th scope="col">Changes</th>
                </tr>
              </thead>
              <tbody>
                {p.data.map((e) => (
                  <Fragment key={e.id}>
                    <tr>
                      <td>{new Date(e.created_at).toLocaleString()}</td>
                      <td>{e.resource_type}</td>
                      <td>{e.action}</td>
                      <td>
                        <code>{e.resource_id}</code>
                      </td>
                      <td>
                        <button
                          type="button"
                          class="link"
                          aria-expanded={open === e.id}
                          onClick={() => setOpen(open === e.id ? null : e.id)}
                        >
                          {open === e.id ? 'Hide' : 'Show'} changes
                        </button>
                      </td>
                    </tr>
                    {open === e.id && (
                      <tr>
                        <td colSpan={5}>
                          <Changes text={e.changes} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
            <PagerFor page={p} onPage={setPage} />
          </>
        )}
      </Show>
    </section>
  )
}
