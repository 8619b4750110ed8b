import { useState } from 'preact/hooks'
import { ApiFailure, api, queryString } from '../api'
import type { CatalogSchema, Datasource } from '../types'
import { ActionError, Checkbox, Pager, TextField, useAction } from '../ui/forms'
import { Show, useLoad } from '../ui/states'

interface Job {
  job_id: string
  action: string
  status: 'running' | 'completed' | 'failed' | 'cancelled'
  result: unknown
  error: string | null
  tables_done: number | null
  tables_total: number | null
}

type Progress = {
  action: string
  seconds: number
  jobId: string
  tables: { done: number; total: number } | null
} | null

/** Tables of the stored selection per page, and discovered tables shown per page. */
const PAGE_SIZE = 50

/** One page of `GET /datasources/{id}/catalog`. */
interface CatalogPage {
  schemas: CatalogSchema[]
  total: number
  page: number
  page_size: number
}

/** Submits a discovery job and polls it until it ends, reporting the time it has run. */
async function runJob<T>(
  dsId: string,
  body: Record<string, unknown>,
  onProgress: (p: Progress) => void,
): Promise<T> {
  const { job_id } = await api<{ job_id: string }>('POST', `/datasources/${dsId}/discover`, body)
  const started = Date.now()
  let tables: { done: number; total: number } | null = null
  try {
    for (;;) {
      onProgress({
        action: String(body['action']),
        seconds: (Date.now() - started) / 1000,
        jobId: job_id,
        tables,
      })
      const job = await api<Job>('GET', `/datasources/${dsId}/discover/${job_id}`)
      if (job.tables_total !== null && job.tables_done !== null) {
        tables = { done: job.tables_done, total: job.tables_total }
      }
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
  const [page, setPage] = useState(1)
  const [schemaFilter, setSchemaFilter] = useState('')
  const [tableFilter, setTableFilter] = useState('')
  const catalog = useLoad(
    () =>
      api<CatalogPage>(
        'GET',
        `/datasources/${id}/catalog${queryString({
          page,
          page_size: PAGE_SIZE,
          schema: schemaFilter,
          search: tableFilter,
        })}`,
      ),
    [id, page, schemaFilter, tableFilter],
  )
  const [progress, setProgress] = useState<Progress>(null)
  const [schemas, setSchemas] = useState<FoundSchema[] | null>(null)
  const [pickedSchemas, setPickedSchemas] = useState<string[]>([])
  const [tables, setTables] = useState<FoundTable[] | null>(null)
  // A set: with thousands of tables, a list's `includes` per checkbox made every click slow.
  const [pickedTables, setPickedTables] = useState<ReadonlySet<string>>(new Set())
  const [foundFilter, setFoundFilter] = useState('')
  const [foundPage, setFoundPage] = useState(1)
  const tableKey = (t: FoundTable) => `${t.schema_name}.${t.table_name}`
  const shownTables = (tables ?? []).filter((t) =>
    tableKey(t).toLowerCase().includes(foundFilter.toLowerCase()),
  )
  const pickTables = (list: FoundTable[], on: boolean) => {
    const next = new Set(pickedTables)
    for (const t of list) {
      if (on) next.add(tableKey(t))
      else next.delete(tableKey(t))
    }
    setPickedTables(next)
  }
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
      setPickedTables(new Set(found.filter((t) => t.is_already_selected).map(tableKey)))
      setFoundFilter('')
      setFoundPage(1)
    })
  const saveSelection = () =>
    action.run(async () => {
      const body = {
        action: 'save_catalog',
        schemas: pickedSchemas.map((schema) => ({
          schema_name: schema,
          is_selected: true,
          tables: (tables ?? [])
            .filter((t) => t.schema_name === schema && pickedTables.has(tableKey(t)))
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
          {progress.tables && progress.tables.total > 0 ? (
            <progress
              aria-label={`${progress.action} running`}
              max={progress.tables.total}
              value={progress.tables.done}
            />
          ) : (
            <progress aria-label={`${progress.action} running`} />
          )}{' '}
          {progress.action.replace('_', ' ')} running for {progress.seconds.toFixed(1)} s
          {progress.tables ? `, ${progress.tables.done} of ${progress.tables.total} tables` : ''}{' '}
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
          {tables.length > PAGE_SIZE && (
            <TextField
              label="Filter tables"
              type="search"
              value={foundFilter}
              onChange={(text) => {
                setFoundFilter(text)
                setFoundPage(1)
              }}
            />
          )}
          {tables.length > 0 && (
            <p>
              {pickedTables.size} of {tables.length} selected.{' '}
              <button type="button" class="link" onClick={() => pickTables(shownTables, true)}>
                Select all {shownTables.length}
                {foundFilter ? ' matching' : ''}
              </button>{' '}
              <button type="button" class="link" onClick={() => pickTables(shownTables, false)}>
                Clear {foundFilter ? 'matching' : 'all'}
              </button>
            </p>
          )}
          {shownTables.slice((foundPage - 1) * PAGE_SIZE, foundPage * PAGE_SIZE).map((t) => {
            const key = tableKey(t)
            return (
              <Checkbox
                key={key}
                label={`${key} (${t.table_type.toLowerCase()})`}
                name={`table-${key}`}
                checked={pickedTables.has(key)}
                onChange={(on) => pickTables([t], on)}
              />
            )
          })}
          {shownTables.length > PAGE_SIZE && (
            <Pager
              page={foundPage}
              pageSize={PAGE_SIZE}
              total={shownTables.length}
              onPage={setFoundPage}
            />
          )}
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
      <div class="filters">
        <TextField
          label="Schema"
          type="search"
          hint="Its exact upstream name"
          value={schemaFilter}
          onChange={(text) => {
            setSchemaFilter(text)
            setPage(1)
          }}
        />
        <TextField
          label="Table name contains"
          type="search"
          value={tableFilter}
          onChange={(text) => {
            setTableFilter(text)
            setPage(1)
          }}
        />
      </div>
      <Show
        result={catalog}
        what="the catalog"
        isEmpty={(c) => c.schemas.length === 0}
        empty={
          schemaFilter || tableFilter
            ? 'No stored table matches.'
            : 'Nothing is exposed yet: discover schemas and save a selection.'
        }
      >
        {(c) => (
          <>
            {(c.total > c.page_size || c.page > 1) && (
              <Pager page={c.page} pageSize={c.page_size} total={c.total} onPage={setPage} />
            )}
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
                            <span
                              key={col.column_name}
                              class={col.is_selected ? 'chip' : 'chip off'}
                            >
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
          </>
        )}
      </Show>
    </div>
  )
}
