import { Select, TextField } from './forms'

/** One column of a mapping row: free text, or a choice when `options` is given. */
export interface MappingColumn<K extends string> {
  key: K
  label: string
  options?: readonly [value: string, label: string][]
}

/**
 * Editable rows of pairs (claim → attribute, claim value → role): add, edit and remove rows.
 * Each input's label names its row, so screen readers and tests can tell rows apart.
 */
export function MappingRows<K extends string>(props: {
  legend: string
  /** One row's name, e.g. "Attribute mapping": labels read "Attribute mapping 1 claim". */
  noun: string
  columns: readonly MappingColumn<K>[]
  rows: readonly Record<K, string>[]
  onChange: (rows: Record<K, string>[]) => void
  /** Whether the API refused row `index` (a 422 naming it). */
  invalid?: (index: number) => boolean
}) {
  const { rows, onChange } = props
  const setCell = (index: number, key: K, value: string) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, [key]: value } : row)))
  const blank = () => {
    const row = {} as Record<K, string>
    for (const column of props.columns) row[column.key] = column.options?.[0]?.[0] ?? ''
    return row
  }
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {rows.map((row, i) => (
        <div class="row" key={i}>
          {props.columns.map((column) => {
            const label = `${props.noun} ${i + 1} ${column.label}`
            return column.options ? (
              <Select
                key={column.key}
                label={label}
                value={row[column.key]}
                options={column.options}
                onChange={(v) => setCell(i, column.key, v)}
              />
            ) : (
              <TextField
                key={column.key}
                label={label}
                value={row[column.key]}
                invalid={props.invalid?.(i)}
                onChange={(v) => setCell(i, column.key, v)}
              />
            )
          })}
          <button
            type="button"
            class="link"
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            Remove {props.noun.toLowerCase()} {i + 1}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, blank()])}>
        Add {props.noun.toLowerCase()}
      </button>
    </fieldset>
  )
}
