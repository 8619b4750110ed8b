import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Datasource, User } from '../types'
import { ActionError, Checkbox, Select, TextArea, useAction } from '../ui/forms'
import { useOptions } from '../ui/paged'

interface PreviewError {
  sqlstate: string
  message: string
  detail?: string | null
  hint?: string | null
  audit_message?: string | null
}
interface PreviewAnswer {
  allowed: boolean
  error: PreviewError | null
  executed: boolean
  statements: {
    original_sql: string
    rewritten_sql: string | null
    statement_type: string
    policies_applied: { name: string; version: number }[]
    result?: {
      columns: { name: string }[]
      rows: (string | null)[][]
      row_count: number
      truncated: boolean
    }
    error?: PreviewError
    not_executed?: string
  }[]
  decision_logs: string[]
}

function Refusal(props: { error: PreviewError }) {
  const { error } = props
  return (
    <div class="state error" role="alert">
      <strong>ERROR {error.sqlstate}:</strong> {error.message}
      {error.detail && <div>DETAIL: {error.detail}</div>}
      {error.hint && <div>HINT: {error.hint}</div>}
      {error.audit_message && error.audit_message !== error.message && (
        <div>
          <small>In the query audit (never shown to the user): {error.audit_message}</small>
        </div>
      )}
    </div>
  )
}

/** One statement as a user would run it: the rewrite, the policies and optionally the rows. */
export function PreviewPage() {
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
  const [userId, setUserId] = useState('')
  const [dsId, setDsId] = useState('')
  const [sql, setSql] = useState('')
  const [execute, setExecute] = useState(true)
  const [answer, setAnswer] = useState<PreviewAnswer | null>(null)
  const action = useAction()
  const user = userId || users[0]?.[0] || ''
  const ds = dsId || datasources[0]?.[0] || ''
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      setAnswer(null)
      setAnswer(
        await api<PreviewAnswer>('POST', '/preview', {
          user_id: user,
          datasource_id: ds,
          sql,
          execute,
          limit: 50,
        }),
      )
    })
  }
  return (
    <section>
      <h1 tabIndex={-1}>Preview as user</h1>
      <p>
        Builds the user's session as a connection would and shows what Palisade does with the SQL.
        With "run it", queries run in a read-only transaction that is rolled back. Each preview is
        recorded in the admin audit.
      </p>
      <form class="card" onSubmit={submit}>
        <div class="row">
          <Select
            label="As user"
            name="preview-user"
            value={user}
            options={users}
            onChange={setUserId}
          />
          <Select
            label="On datasource"
            name="preview-datasource"
            value={ds}
            options={datasources}
            onChange={setDsId}
          />
        </div>
        <TextArea label="SQL" name="preview-sql" value={sql} onChange={setSql} rows={5} />
        <Checkbox label="Run it (first 50 rows)" checked={execute} onChange={setExecute} />
        <ActionError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy || !user || !ds}>
          Preview
        </button>
      </form>
      {answer && (
        <section class="card" aria-label="Preview result">
          <h2>{answer.allowed ? 'Allowed' : 'Refused'}</h2>
          {answer.error && <Refusal error={answer.error} />}
          {answer.statements.map((s, i) => (
            <div key={i} class="statement">
              <h3>
                Statement {i + 1} ({s.statement_type})
              </h3>
              <div class="side-by-side">
                <pre>{s.original_sql}</pre>
                <pre>{s.rewritten_sql ?? ''}</pre>
              </div>
              <p>
                Policies:{' '}
                {s.policies_applied.length === 0
                  ? 'none'
                  : s.policies_applied.map((p) => `${p.name} v${p.version}`).join(', ')}
              </p>
              {s.error && <Refusal error={s.error} />}
              {s.not_executed && <p>Not run: {s.not_executed}</p>}
              {s.result && (
                <table>
                  <thead>
                    <tr>
                      {s.result.columns.map((c, j) => (
                        <th scope="col" key={j}>
                          {c.name}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {s.result.rows.map((row, r) => (
                      <tr key={r}>
                        {row.map((v, j) => (
                          <td key={j}>{v === null ? <em>null</em> : v}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                  <caption>
                    {s.result.row_count} row{s.result.row_count === 1 ? '' : 's'}
                    {s.result.truncated ? ' (more not shown)' : ''}
                  </caption>
                </table>
              )}
            </div>
          ))}
          {answer.decision_logs.length > 0 && (
            <>
              <h3>Decision-function logs</h3>
              <pre>{answer.decision_logs.join('\n')}</pre>
            </>
          )}
        </section>
      )}
    </section>
  )
}
