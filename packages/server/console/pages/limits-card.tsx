import { useState } from 'preact/hooks'
import { api } from '../api'
import type { Limits } from '../types'
import { ActionError, Select, TextField, useAction } from '../ui/forms'
import { Show, useLoad } from '../ui/states'

const NUMBERS = [
  ['max_rows_per_statement', 'Rows per statement'],
  ['max_statements_per_minute', 'Statements per minute'],
  ['max_concurrent_statements', 'Concurrent statements'],
] as const

type NumberKey = (typeof NUMBERS)[number][0]

/**
 * The row and rate limits of a user or role (docs/roles-and-access.md#limits): an empty field
 * has no limit. A user's card also shows the effective limits, its roles' included.
 */
export function LimitsCard(props: {
  path: string
  limits: Limits | null
  onSaved: () => void
  effective?: boolean
}) {
  const text = (key: NumberKey) => String(props.limits?.[key] ?? '')
  const [values, setValues] = useState<Record<NumberKey, string>>({
    max_rows_per_statement: text('max_rows_per_statement'),
    max_statements_per_minute: text('max_statements_per_minute'),
    max_concurrent_statements: text('max_concurrent_statements'),
  })
  const [mode, setMode] = useState<string>(props.limits?.on_row_limit ?? 'error')
  const action = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    const limits: Record<string, unknown> = { on_row_limit: mode }
    // A number the API refuses (0, 1.5, text) comes back as a 422 naming the field.
    for (const [key] of NUMBERS) {
      const value = values[key].trim()
      limits[key] = value === '' ? null : Number(value)
    }
    void action.run(async () => {
      await api('PATCH', props.path, { limits })
      props.onSaved()
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>Limits</h2>
      <div class="row">
        {NUMBERS.map(([key, label]) => (
          <TextField
            key={key}
            label={label}
            name={`limit-${key}`}
            value={values[key]}
            onChange={(v) => setValues({ ...values, [key]: v })}
            hint="empty: no limit"
          />
        ))}
        <Select
          label="Past the row limit"
          name="limit-on_row_limit"
          value={mode}
          options={[
            ['error', 'fail the statement (54000)'],
            ['truncate', 'send the first rows and a warning'],
          ]}
          onChange={setMode}
        />
      </div>
      <ActionError error={action.error} />
      <button type="submit" disabled={action.busy}>
        Save limits
      </button>
      {props.effective && <EffectiveLimits path={props.path} version={props.limits} />}
    </form>
  )
}

function EffectiveLimits(props: { path: string; version: unknown }) {
  const effective = useLoad(
    () => api<Required<Limits>>('GET', `${props.path}/effective-limits`),
    [props.path, props.version],
  )
  return (
    <Show result={effective} what="the effective limits">
      {(l) => (
        <p>
          Effective, with the roles': rows per statement {l.max_rows_per_statement ?? 'none'}
          {l.max_rows_per_statement === null ? '' : ` (${l.on_row_limit})`}, statements per minute{' '}
          {l.max_statements_per_minute ?? 'none'}, concurrent statements{' '}
          {l.max_concurrent_statements ?? 'none'}.
        </p>
      )}
    </Show>
  )
}
