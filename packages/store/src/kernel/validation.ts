import * as v from 'valibot'
import { type ErrorDetail, ValidationError } from './errors.js'

/** Joins a valibot issue path as docs/admin-api.md#errors writes fields: `targets[0].schemas[1]`. */
export function fieldOf(path: readonly { key: unknown }[] | undefined, prefix = ''): string {
  let out = prefix
  for (const item of path ?? []) {
    if (typeof item.key === 'number') out += `[${item.key}]`
    else out += out === '' ? String(item.key) : `.${String(item.key)}`
  }
  return out
}

/** Valibot issue types mapped onto the detail codes of docs/admin-api.md#errors. */
const codeByType: Readonly<Record<string, string>> = {
  min_length: 'too_short',
  non_empty: 'too_short',
  max_length: 'too_long',
  max_bytes: 'too_long',
  min_value: 'out_of_range',
  max_value: 'out_of_range',
  integer: 'invalid_type',
  safe_integer: 'out_of_range',
  regex: 'pattern',
  picklist: 'invalid_enum',
  literal: 'invalid_enum',
  uuid: 'invalid_type',
  check: 'pattern',
  email: 'pattern',
}

/**
 * Turns valibot issues into `{field, code, message}` details with `targets[0].columns` paths:
 * the one conversion, used by the store and the admin API alike.
 */
export function detailsOf(issues: readonly v.BaseIssue<unknown>[], prefix = ''): ErrorDetail[] {
  return issues.map((issue) => {
    const field = fieldOf(issue.path, prefix) || prefix || 'body'
    if (issue.kind === 'schema' && issue.input === undefined && issue.type !== 'undefined') {
      return { field, code: 'required', message: `${field} is required` }
    }
    // A union on a key (`action` of discovery) names the bad value: an enum problem.
    const variant = issue.type === 'variant' && issue.path !== undefined
    const code = variant
      ? 'invalid_enum'
      : (codeByType[issue.type] ?? (issue.kind === 'schema' ? 'invalid_type' : 'pattern'))
    return { field, code, message: `${field} ${issue.message}` }
  })
}

/** Parses `input` with every failure reported together, or throws 422 validation_failed. */
export function parseBody<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input ?? {}, { abortEarly: false })
  if (!result.success) throw new ValidationError(detailsOf(result.issues))
  return result.output
}

/** A string between `min` and `max` characters. */
export const boundedString = (min: number, max: number) =>
  v.pipe(
    v.string('expected a string'),
    v.minLength(min, `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
  )

/** A lowercase hyphenated UUID. */
export const uuidString = v.pipe(
  v.string('expected a uuid'),
  v.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'expected a uuid'),
)

/** Names of policies and decision functions (docs/resources.md#policies). */
export const policyName = v.pipe(
  boundedString(1, 100),
  v.regex(/^[A-Za-z0-9 _\-.:()'"]+$/, 'may contain letters, digits, space and _ - . : ( ) \' "'),
  v.check((s) => s.trim() === s, 'must not start or end with whitespace'),
)

/** Role names (docs/roles-and-access.md#roles) and usernames (docs/resources.md#users) share one rule. */
export const identName = v.pipe(
  boundedString(3, 50),
  v.regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, 'must start with a letter and use [A-Za-z0-9_.-]'),
)

/** An integer from `min` to `max`. */
export const intRange = (min: number, max: number) =>
  v.pipe(
    v.number('expected an integer'),
    v.integer('expected an integer'),
    v.minValue(min, `must be ${min}-${max}`),
    v.maxValue(max, `must be ${min}-${max}`),
  )

/** A JSON object (valibot's `record` alone also accepts arrays). */
export const jsonObject = v.pipe(
  v.record(v.string(), v.unknown(), 'expected an object'),
  v.check((value) => !Array.isArray(value), 'expected an object'),
)

/** Throws 422 when a request names keys that this route forbids. */
export function rejectFields(input: unknown, fields: readonly string[]): void {
  if (!input || typeof input !== 'object') return
  const details = fields
    .filter((f) => (input as Record<string, unknown>)[f] !== undefined)
    .map((f) => ({ field: f, code: 'not_allowed', message: `${f} cannot be set here` }))
  if (details.length > 0) throw new ValidationError(details)
}

/** True when the value is a plain JSON object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
