import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { ApiFailure } from '../api'
import { ErrorBox } from './states'

/** One submit at a time; its failure is kept for display until the next attempt. */
export function useAction() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiFailure | null>(null)
  async function run<T>(fn: () => Promise<T>): Promise<T | undefined> {
    setBusy(true)
    setError(null)
    try {
      return await fn()
    } catch (e) {
      setError(
        e instanceof ApiFailure ? e : new ApiFailure(0, 'client_error', (e as Error).message),
      )
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, run, clear: () => setError(null) }
}

/** Whether a failed save's 422 names this field or a part of it (`role_mappings[0].role_id`). */
export function failedField(error: ApiFailure | null, field: string): boolean {
  return !!error?.details.some(
    (d) => d.field === field || d.field.startsWith(`${field}.`) || d.field.startsWith(`${field}[`),
  )
}

export function ActionError(props: { error: ApiFailure | null }) {
  return props.error ? <ErrorBox error={props.error} /> : null
}

/**
 * The error of a versioned save: a version conflict says so, with a button to reload the
 * object; anything else is shown as any failed action.
 */
export function SaveError(props: { error: ApiFailure | null; what: string; onReload: () => void }) {
  if (props.error?.code !== 'version_conflict') return <ActionError error={props.error} />
  return (
    <div class="state error" role="alert">
      <strong>Version conflict:</strong> someone saved this {props.what} after you opened it (
      {props.error.message}). Reload to see their version, then apply your change again.{' '}
      <button type="button" onClick={props.onReload}>
        Reload {props.what}
      </button>
    </div>
  )
}

let nextId = 0
/** A labelled control: the label's `for` points at the control, for screen readers. */
export function Field(props: {
  label: string
  hint?: string
  children: (id: string) => ComponentChildren
}) {
  const [id] = useState(() => `f${++nextId}`)
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id)}
      {props.hint && <small class="hint">{props.hint}</small>}
    </div>
  )
}

/** The input attributes the console uses. */
interface InputProps {
  name?: string
  type?: 'text' | 'password' | 'search' | 'number' | 'datetime-local'
  autoComplete?: string
  required?: boolean
}

export function TextField(
  props: {
    label: string
    value: string
    onChange: (v: string) => void
    hint?: string
    /** Marks the input for assistive technology, e.g. when a 422 names its field. */
    invalid?: boolean
  } & InputProps,
) {
  const { label, value, onChange, hint, invalid, type = 'text', ...rest } = props
  return (
    <Field label={label} hint={hint}>
      {(id) => (
        <input
          id={id}
          // Preact types each input type separately; all the console's types take a text value.
          type={type as 'text'}
          value={value}
          aria-invalid={invalid ? 'true' : undefined}
          onInput={(e) => onChange((e.target as HTMLInputElement).value)}
          {...rest}
        />
      )}
    </Field>
  )
}

export function TextArea(props: {
  label: string
  value: string
  onChange: (v: string) => void
  rows?: number
  hint?: string
  name?: string
  invalid?: boolean
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id) => (
        <textarea
          id={id}
          name={props.name}
          rows={props.rows ?? 4}
          spellcheck={false}
          aria-invalid={props.invalid ? 'true' : undefined}
          value={props.value}
          onInput={(e) => props.onChange((e.target as HTMLTextAreaElement).value)}
        />
      )}
    </Field>
  )
}

export function Select(props: {
  label: string
  value: string
  options: readonly (string | [value: string, label: string])[]
  onChange: (v: string) => void
  name?: string
}) {
  return (
    <Field label={props.label}>
      {(id) => (
        <select
          id={id}
          name={props.name}
          value={props.value}
          onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
        >
          {props.options.map((o) => {
            const [value, label] = typeof o === 'string' ? [o, o] : o
            return (
              <option key={value} value={value}>
                {label}
              </option>
            )
          })}
        </select>
      )}
    </Field>
  )
}

export function Checkbox(props: {
  label: string
  checked: boolean
  onChange: (v: boolean) => void
  name?: string
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        name={props.name}
        checked={props.checked}
        onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)}
      />{' '}
      {props.label}
    </label>
  )
}

/** Previous/next over a paginated list, with the position read out. */
export function Pager(props: {
  page: number
  pageSize: number
  total: number
  onPage: (page: number) => void
}) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize))
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </button>
      <span>
        Page {props.page} of {pages} ({props.total} in all)
      </span>
      <button
        type="button"
        disabled={props.page >= pages}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next
      </button>
    </nav>
  )
}
