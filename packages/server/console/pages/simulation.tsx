import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Datasource } from '../types'
import { instant } from '../ui/format'
import { ActionError, Checkbox, Select, TextArea, TextField, useAction } from '../ui/forms'
import { useOptions } from '../ui/paged'

interface SimulatedQuery {
  user: { username: string }
  original_sql: string
  occurrences: number
  change: string
  rows_delta: number | null
  columns_removed: string[]
  columns_masked: string[]
  columns_unmasked: string[]
  after: { error: { sqlstate: string; message: string } | null }
}
interface SimulationAnswer {
  summary: Record<string, number>
  queries: SimulatedQuery[]
}

const EXAMPLE = JSON.stringify(
  {
    create_policies: [
      {
        ref: 'no-email',
        name: 'no-email',
        policy_type: 'column_deny',
        targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
      },
    ],
    assign: [{ policy_ref: 'no-email', scope: 'all' }],
  },
  null,
  2,
)

/** A proposed policy change replayed over the statements users really ran; nothing is saved. */
export function SimulationPage() {
  const datasources = useOptions<Datasource>(
    '/datasources',
    (d) => d.name,
    (d) => d.id,
  )
  const [dsId, setDsId] = useState('')
  const [changes, setChanges] = useState(EXAMPLE)
  const [from, setFrom] = useState('')
  const [maxQueries, setMaxQueries] = useState('100')
  const [execute, setExecute] = useState(true)
  const [answer, setAnswer] = useState<SimulationAnswer | null>(null)
  const action = useAction()
  const ds = dsId || datasources[0]?.[0] || ''
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      let parsed: unknown
      try {
        parsed = JSON.parse(changes)
      } catch (err) {
        throw new Error(`the change is not valid JSON: ${(err as Error).message}`)
      }
      setAnswer(null)
      setAnswer(
        await api<SimulationAnswer>('POST', '/simulations', {
          datasource_id: ds,
          changes: parsed,
          execute,
          window: {
            max_queries: Number(maxQueries),
            ...(from ? { from: instant(from) } : {}),
          },
        }),
      )
    })
  }
  return (
    <section>
      <h1 tabIndex={-1}>What-if simulation</h1>
      <p>
        Replays each user's recent statements from the query audit under today's policies and under
        the proposed change, in a transaction that is always rolled back.
      </p>
      <form class="card" onSubmit={submit}>
        <div class="row">
          <Select label="Datasource" value={ds} options={datasources} onChange={setDsId} />
          <TextField
            label="Statements since"
            type="datetime-local"
            value={from}
            onChange={setFrom}
          />
          <TextField
            label="At most statements"
            type="number"
            value={maxQueries}
            onChange={setMaxQueries}
          />
        </div>
        <TextArea
          label="Proposed change (JSON)"
          name="simulation-changes"
          rows={12}
          value={changes}
          onChange={setChanges}
        />
        <Checkbox
          label="Run the statements (compare rows, not only the rewrite)"
          checked={execute}
          onChange={setExecute}
        />
        <ActionError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy || !ds}>
          {action.busy ? 'Simulating…' : 'Simulate'}
        </button>
      </form>
      {answer && (
        <section class="card" aria-label="Simulation result">
          <h2>Result</h2>
          <p>
            {Object.entries(answer.summary)
              .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`)
              .join(', ')}
          </p>
          {answer.queries.filter((q) => q.change !== 'unchanged').length === 0 ? (
            <p class="state empty">No statement would change.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Statement</th>
                  <th scope="col">Runs</th>
                  <th scope="col">Change</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {answer.queries
                  .filter((q) => q.change !== 'unchanged')
                  .map((q, i) => (
                    <tr key={i}>
                      <td>{q.user.username}</td>
                      <td>
                        <code>{q.original_sql}</code>
                      </td>
                      <td>{q.occurrences}</td>
                      <td>{q.change.replace('_', ' ')}</td>
                      <td>
                        {q.after.error &&
                          `now: ${q.after.error.sqlstate} ${q.after.error.message}. `}
                        {q.rows_delta ? `rows ${q.rows_delta > 0 ? '+' : ''}${q.rows_delta}. ` : ''}
                        {q.columns_removed.length > 0 &&
                          `columns removed: ${q.columns_removed.join(', ')}. `}
                        {q.columns_masked.length > 0 && `masked: ${q.columns_masked.join(', ')}. `}
                        {q.columns_unmasked.length > 0 &&
                          `unmasked: ${q.columns_unmasked.join(', ')}.`}
                      </td>
                    </tr>
                  ))}
              </tbody>
            </table>
          )}
        </section>
      )}
    </section>
  )
}
