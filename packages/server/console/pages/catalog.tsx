import { useState } from 'preact/hooks'
import { ApiFailure, api } from '../api'
import type { CatalogSchema, Datasource } from '../types'
import { ActionError, Checkbox, useAction } from '../ui/forms'
import { Show, useLoad } from '../ui/states'

interface Job {
  job_id: string
  action: string
  status: 'running' | 'completed' | 'failed' | 'cancelled'
  result: unknown
  error: string | null
}

type Progress = { action: string; seconds: number; jobId: string } | null

/** Submits a discovery job and polls it until it ends, reporting the time it has run. */
async function runJob<T>(
  dsId: string,
  body: Record<string, unknown>,
  onProgress: (p: Progress) => void,
): Promise<T> {
  const { job_id } = await api<{ job_id: string }>('POST', `/datasources/${dsId}/discover`, body)
  const started = Date.now()
  try {
    for (;;) {
      onProgress({
        action: String(body['action']),
        seconds: (Date.now() - started) / 1000,
        jobId: job_id,
      })
      const job = await api<Job>('GET', `/datasources/${dsId}/discover/${job_id}`)
      if (job.status === 'completed') return job.result as T
      if (job.status === 'failed')
        throw new ApiFailure(0, 'job_failed', job.error ?? 'the job failed')
      if (job.status === 'cancelled')
        throw new ApiFailure(0, 'job_cancelled', 'the job was cancelled')
      await new Promise((r) => setTimeout(r, 400))
    }
  } finally {
    onProgress(null)
  }
}

interface FoundSchema {
  schema_name: string
  is_already_selected: boolean
}
interface FoundTable {
  schema_name: string
  table_name: string
  table_type: string
  is_already_selected: boolean
}

/** The stored catalog, discovery (schemas, then tables, then save) and sync with its drift report. */
export function CatalogPanel(props: { ds: Datasource; onSynced: () => void }) {
  const id = props.ds.id
  const catalog = useLoad(
    () => api<{ schemas: CatalogSchema[] }>('GET', `/datasources/${id}/catalog`),
    [id],
  )
  const [progress, setProgress] = useState<Progress>(null)
  const [schemas, setSchemas] = useState<FoundSchema[] | null>(null)
  const [pickedSchemas, setPickedSchemas] = useState<string[]>([])
  const [tables, setTables] = useState<FoundTable[] | null>(null)
  const [pickedTables, setPickedTables] = useState<string[]>([])
  const [report, setReport] = useState<Record<string, unknown> | null>(null)
  const action = useAction()

  const discoverSchemas = () =>
    action.run(async () => {
      const found = await runJob<FoundSchema[]>(id, { action: 'discover_schemas' }, setProgress)
      setSchemas(found)
      setPickedSchemas(found.filter((s) => s.is_already_selected).map((s) => s.schema_name))
      setTables(null)
    })
  const discoverTables = () =>
    action.run(async () => {
      const found = await runJob<FoundTable[]>(
        id,
        { action: 'discover_tables', schemas: pickedSchemas },
        setProgress,
      )
      setTables(found)
      setPickedTables(
        found.filter((t) => t.is_already_selected).map((t) => `${t.schema_name}.${t.table_name}`),
      )
    })
  const saveSelection = () =>
    action.run(async () => {
      const body = {
        action: 'save_catalog',
        schemas: pickedSchemas.map((schema) => ({
          schema_name: schema,
          is_selected: true,
          tables: (tables ?? [])
            .filter(
              (t) => t.schema_name === schema && pickedTables.includes(`${schema}.${t.table_name}`),
            )
            .map((t) => ({
              table_name: t.table_name,
              table_type: t.table_type,
              is_selected: true,
            })),
        })),
      }
      await runJob(id, body, setProgress)
      setSchemas(null)
      setTables(null)
      catalog.reload()
    })
  const sync = () =>
    action.run(async () => {
      setReport(await runJob<Record<string, unknown>>(id, { action: 'sync_catalog' }, setProgress))
      catalog.reload()
      props.onSynced()
    })
  const cancel = () =>
    progress && action.run(() => api('DELETE', `/datasources/${id}/discover/${progress.jobId}`))
  const toggle = (list: string[], set: (l: string[]) => void, key: string, on: boolean) =>
    set(on ? [...list, key] : list.filter((k) => k !== key))

  return (
    <div class="card">
      <h2>Catalog</h2>
      <p>Only selected schemas, tables and columns exist for SQL users.</p>
      <div class="buttons">
        <button type="button" onClick={discoverSchemas} disabled={action.busy}>
          Discover schemas
        </button>{' '}
        <button type="button" onClick={sync} disabled={action.busy}>
          Sync catalog
        </button>
      </div>
      {progress && (
        <p class="progress" role="status" aria-live="polite">
          <progress aria-label={`${progress.action} running`} /> {progress.action.replace('_', ' ')}{' '}
          running for {progress.seconds.toFixed(1)} s{' '}
          <button type="button" class="link" onClick={cancel}>
            Cancel
          </button>
        </p>
      )}
      <ActionError error={action.error} />
      {schemas && (
        <fieldset>
          <legend>Schemas upstream</legend>
          {schemas.length === 0 && (
            <p class="state empty">The upstream has no schemas to expose.</p>
          )}
          {schemas.map((s) => (
            <Checkbox
              key={s.schema_name}
              label={s.schema_name}
              name={`schema-${s.schema_name}`}
              checked={pickedSchemas.includes(s.schema_name)}
              onChange={(on) => toggle(pickedSchemas, setPickedSchemas, s.schema_name, on)}
            />
          ))}
          <button
            type="button"
            onClick={discoverTables}
            disabled={action.busy || pickedSchemas.length === 0}
          >
            Discover tables
          </button>
        </fieldset>
      )}
      {tables && (
        <fieldset>
          <legend>Tables in the chosen schemas</legend>
          {tables.length === 0 && <p class="state empty">No tables there.</p>}
          {tables.map((t) => {
            const key = `${t.schema_name}.${t.table_name}`
            return (
              <Checkbox
                key={key}
                label={`${key} (${t.table_type.toLowerCase()})`}
                name={`table-${key}`}
                checked={pickedTables.includes(key)}
                onChange={(on) => toggle(pickedTables, setPickedTables, key, on)}
              />
            )
          })}
          <button type="button" class="primary" onClick={saveSelection} disabled={action.busy}>
            Save selection
          </button>
        </fieldset>
      )}
      {report && (
        <div role="status">
          <h3>Sync report{report['has_breaking_changes'] ? ' (breaking changes)' : ''}</h3>
          <ul>
            {Object.entries(report)
              .filter(([, v]) => Array.isArray(v) && v.length > 0)
              .map(([k, v]) => (
                <li key={k}>
                  {k.replace(/_/g, ' ')}: {(v as string[]).join(', ')}
                </li>
              ))}
          </ul>
          {Object.values(report).every((v) => !Array.isArray(v) || v.length === 0) && (
            <p>No drift.</p>
          )}
        </div>
      )}
      <h3>Stored selection</h3>
      <Show
        result={catalog}
        what="the catalog"
        isEmpty={(c) => c.schemas.length === 0}
        empty="Nothing is exposed yet: discover schemas and save a selection."
      >
        {(c) => (
          <ul class="tree">
            {c.schemas.map((s) => (
              <li key={s.schema_name}>
                <strong>{s.schema_name}</strong>
                {s.schema_alias ? ` as ${s.schema_alias}` : ''}
                {s.is_selected ? '' : ' (not selected)'}
                <ul>
                  {s.tables.map((t) => (
                    <li key={t.table_name}>
                      {t.table_name} <small>{t.table_type.toLowerCase()}</small>
                      {t.is_selected ? '' : ' (not selected)'}
                      <div class="columns">
                        {t.columns.map((col) => (
                          <span key={col.column_name} class={col.is_selected ? 'chip' : 'chip off'}>
                            {col.column_name} <small>{col.data_type}</small>
                          </span>
                        ))}
                      </div>
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        )}
      </Show>
    </div>
  )
}
