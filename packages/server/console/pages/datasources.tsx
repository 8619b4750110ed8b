import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Assignment, Datasource, DatasourceType } from '../types'
import { DeleteCard } from '../ui/delete-card'
import { assignmentScope } from '../ui/format'
import { ActionError, Checkbox, Select, TextArea, TextField, useAction } from '../ui/forms'
import { PagerFor, usePaged } from '../ui/paged'
import { Link, navigate } from '../ui/router'
import { Show, useLoad } from '../ui/states'
import { CatalogPanel } from './catalog'
import { DatasourceAccess } from './datasource-access'
import { TagsPanel } from './tags'

export function DatasourcesPage() {
  const list = usePaged<Datasource>('/datasources')
  return (
    <section>
      <h1 tabIndex={-1}>Datasources</h1>
      <CreateDatasource />
      <h2>All datasources</h2>
      <TextField
        label="Search datasources"
        type="search"
        value={list.search}
        onChange={list.setSearch}
      />
      <Show result={list.result} isEmpty={(p) => p.total === 0} empty="No datasources yet.">
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Access mode</th>
                  <th scope="col">Active</th>
                  <th scope="col">Last sync</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Link to={`/datasources/${d.id}`}>{d.name}</Link>
                    </td>
                    <td>{d.ds_type}</td>
                    <td>{d.access_mode}</td>
                    <td>{d.is_active ? 'yes' : 'no'}</td>
                    <td>{d.last_sync_at ? new Date(d.last_sync_at).toLocaleString() : 'never'}</td>
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

/** The connection fields of one datasource type, as `GET /datasource-types` describes them. */
function ConfigFields(props: {
  type: DatasourceType | undefined
  values: Record<string, string>
  onChange: (values: Record<string, string>) => void
  secretSet?: boolean
}) {
  if (!props.type) return null
  return (
    <div class="row">
      {props.type.fields.map((field) => {
        const set = (v: string) => props.onChange({ ...props.values, [field.key]: v })
        const value = props.values[field.key] ?? ''
        if (field.field_type === 'select')
          return (
            <Select
              key={field.key}
              label={field.label}
              value={value || String(field.default_value ?? field.options?.[0] ?? '')}
              options={field.options ?? []}
              onChange={set}
            />
          )
        if (field.field_type === 'textarea')
          return (
            <TextArea key={field.key} label={field.label} value={value} onChange={set} rows={3} />
          )
        return (
          <TextField
            key={field.key}
            label={`${field.label}${field.required ? '' : ' (optional)'}`}
            name={`config-${field.key}`}
            type={field.is_secret ? 'password' : field.field_type === 'number' ? 'number' : 'text'}
            autoComplete={field.is_secret ? 'new-password' : 'off'}
            value={value}
            onChange={set}
            hint={field.is_secret && props.secretSet ? 'set; leave blank to keep it' : undefined}
          />
        )
      })}
    </div>
  )
}

/** Form text to the config the API takes: numbers as numbers, blanks left out. */
function configBody(type: DatasourceType | undefined, values: Record<string, string>) {
  const config: Record<string, unknown> = {}
  for (const field of type?.fields ?? []) {
    const text = values[field.key]
    if (text === undefined || text === '') continue
    config[field.key] = field.field_type === 'number' ? Number(text) : text
  }
  return config
}

function useTypes() {
  return useLoad(() => api<DatasourceType[]>('GET', '/datasource-types'), [])
}

function CreateDatasource() {
  const types = useTypes()
  const [name, setName] = useState('')
  const [dsType, setDsType] = useState('postgres')
  const [values, setValues] = useState<Record<string, string>>({})
  const action = useAction()
  const type = types.state === 'ok' ? types.data.find((t) => t.ds_type === dsType) : undefined
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      const ds = await api<Datasource>('POST', '/datasources', {
        name,
        ds_type: dsType,
        config: configBody(type, values),
      })
      navigate(`/datasources/${ds.id}`)
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>New datasource</h2>
      <div class="row">
        <TextField
          label="Name (the database name clients connect with)"
          name="ds-name"
          value={name}
          onChange={setName}
        />
        <Show result={types} what="datasource types">
          {(list) => (
            <Select
              label="Type"
              value={dsType}
              options={list.map((t) => [t.ds_type, t.label] as [string, string])}
              onChange={(v) => {
                setDsType(v)
                setValues({})
              }}
            />
          )}
        </Show>
      </div>
      <ConfigFields type={type} values={values} onChange={setValues} />
      <ActionError error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        Create datasource
      </button>
    </form>
  )
}

export function DatasourcePage(props: { id: string }) {
  const ds = useLoad(() => api<Datasource>('GET', `/datasources/${props.id}`), [props.id])
  return (
    <section>
      <Show result={ds} what="the datasource">
        {(d) => (
          <>
            <h1 tabIndex={-1}>Datasource {d.name}</h1>
            <DatasourceSettings key={JSON.stringify(d)} ds={d} onSaved={ds.reload} />
            <DatasourceAccess ds={d} />
            <CatalogPanel ds={d} onSynced={ds.reload} />
            <TagsPanel ds={d} />
            <DatasourceAssignments ds={d} />
            <DeleteDatasource ds={d} />
          </>
        )}
      </Show>
    </section>
  )
}

function DatasourceSettings(props: { ds: Datasource; onSaved: () => void }) {
  const { ds } = props
  const types = useTypes()
  const type = types.state === 'ok' ? types.data.find((t) => t.ds_type === ds.ds_type) : undefined
  const initial: Record<string, string> = {}
  for (const [k, v] of Object.entries(ds.config))
    if (v !== null && typeof v !== 'object') initial[k] = String(v)
  const [values, setValues] = useState(initial)
  const [accessMode, setAccessMode] = useState<string>(ds.access_mode)
  const [active, setActive] = useState(ds.is_active)
  const [timeout, setTimeoutMs] = useState(String(ds.statement_timeout_ms))
  const [poolSize, setPoolSize] = useState(String(ds.pool_size))
  const [poolMode, setPoolMode] = useState<string>(ds.pool_mode ?? 'session')
  const [sampling, setSampling] = useState(ds.classification_sampling !== false)
  const save = useAction()
  const test = useAction()
  const [testAnswer, setTestAnswer] = useState<string | null>(null)
  const submit = (e: Event) => {
    e.preventDefault()
    void save.run(async () => {
      await api('PATCH', `/datasources/${ds.id}`, {
        access_mode: accessMode,
        is_active: active,
        statement_timeout_ms: Number(timeout),
        pool_size: Number(poolSize),
        ...(ds.pool_mode ? { pool_mode: poolMode } : {}),
        classification_sampling: sampling,
        config: configBody(type, values),
      })
      props.onSaved()
    })
  }
  const runTest = () =>
    test.run(async () => {
      setTestAnswer(null)
      const r = await api<{ success: boolean; server_version?: string; message?: string }>(
        'POST',
        `/datasources/${ds.id}/test`,
      )
      setTestAnswer(
        r.success ? `Connected: server version ${r.server_version}` : `Failed: ${r.message}`,
      )
    })
  return (
    <form class="card" onSubmit={submit}>
      <h2>Settings</h2>
      <ConfigFields
        type={type}
        values={values}
        onChange={setValues}
        secretSet={ds.config['password_set'] === true}
      />
      <div class="row">
        <Select
          label="Access mode"
          value={accessMode}
          options={[
            ['policy_required', 'policy_required (tables need a policy to be readable)'],
            ['open', 'open'],
          ]}
          onChange={setAccessMode}
        />
        <TextField
          label="Statement timeout (ms, 0 = none)"
          type="number"
          value={timeout}
          onChange={setTimeoutMs}
        />
        <TextField label="Pool size" type="number" value={poolSize} onChange={setPoolSize} />
        {ds.pool_mode && (
          <Select
            label="Pool mode"
            value={poolMode}
            options={['session', 'transaction']}
            onChange={setPoolMode}
          />
        )}
      </div>
      <Checkbox label="Active (accepts connections)" checked={active} onChange={setActive} />
      <Checkbox
        label="Classification may sample column values (off: column names only)"
        checked={sampling}
        onChange={setSampling}
      />
      <ActionError error={save.error} />
      <button type="submit" disabled={save.busy}>
        Save settings
      </button>{' '}
      <button type="button" onClick={runTest} disabled={test.busy}>
        {test.busy ? 'Testing…' : 'Test connection'}
      </button>
      <ActionError error={test.error} />
      {testAnswer && <p role="status">{testAnswer}</p>}
    </form>
  )
}

function DatasourceAssignments(props: { ds: Datasource }) {
  const list = useLoad(
    () => api<Assignment[]>('GET', `/datasources/${props.ds.id}/policies`),
    [props.ds.id],
  )
  const action = useAction()
  const unassign = (a: Assignment) =>
    action.run(async () => {
      await api('DELETE', `/datasources/${props.ds.id}/policies/${a.id}`)
      list.reload()
    })
  return (
    <div class="card">
      <h2>Policy assignments</h2>
      <p>Assign policies from a policy's page.</p>
      <Show
        result={list}
        isEmpty={(l) => l.length === 0}
        empty="No policy is assigned on this datasource."
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Policy</th>
                <th scope="col">Type</th>
                <th scope="col">Scope</th>
                <th scope="col">Priority</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link to={`/policies/${a.policy_id}`}>{a.policy_name}</Link>
                  </td>
                  <td>{a.policy_type}</td>
                  <td>{assignmentScope(a)}</td>
                  <td>{a.priority}</td>
                  <td>
                    <button type="button" class="link" onClick={() => unassign(a)}>
                      Unassign {a.policy_name}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <ActionError error={action.error} />
    </div>
  )
}

function DeleteDatasource(props: { ds: Datasource }) {
  return (
    <DeleteCard
      label="Delete datasource"
      question={() => `Delete datasource ${props.ds.name}? Every session on it ends.`}
      path={`/datasources/${props.ds.id}`}
      back="/datasources"
    />
  )
}
