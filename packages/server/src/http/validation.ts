import * as v from 'valibot'
import { ApiError, type ApiErrorDetail } from './api-error.js'

/** Valibot issue types mapped onto the docs/admin-api.md#errors detail codes. */
const DETAIL_CODES: Readonly<Record<string, string>> = {
  min_length: 'too_short',
  non_empty: 'too_short',
  max_length: 'too_long',
  max_bytes: 'too_long',
  min_value: 'out_of_range',
  max_value: 'out_of_range',
  safe_integer: 'out_of_range',
  integer: 'invalid_type',
  regex: 'pattern',
  uuid: 'invalid_type',
  picklist: 'invalid_enum',
  literal: 'invalid_enum',
  check: 'pattern',
}

/** Turns valibot issues into `{field, code, message}` details with `targets[0].columns` paths. */
export function issueDetails(issues: readonly v.BaseIssue<unknown>[]): ApiErrorDetail[] {
  return issues.map((issue) => {
    const field = fieldPath(issue) || 'body'
    const missing = issue.kind === 'schema' && issue.input === undefined
    if (missing) return { field, code: 'required', message: `${field} is required` }
    // A union on a key (`action` of discovery) names the bad value: an enum problem.
    const variant = issue.type === 'variant' && issue.path !== undefined
    const code = variant
      ? 'invalid_enum'
      : (DETAIL_CODES[issue.type] ?? (issue.kind === 'schema' ? 'invalid_type' : 'pattern'))
    return { field, code, message: `${field} ${issue.message}` }
  })
}

/** `getDotPath` writes `targets.0.columns`; the contract writes `targets[0].columns`. */
function fieldPath(issue: v.BaseIssue<unknown>): string {
  const dotted = v.getDotPath(issue)
  if (dotted === null) return ''
  return dotted.replace(/\.(\d+)(?=\.|$)/g, '[$1]')
}

/** Validates a request body: 422 validation_failed with every failing field (step 7). */
export function validateBody<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: false })
  if (result.success) return result.output
  throw new ApiError(
    422,
    'validation_failed',
    'request body is invalid',
    issueDetails(result.issues),
  )
}

/** Validates path or query parameters: 400 invalid_parameter (step 4). */
export function validateParameters<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: false })
  if (result.success) return result.output
  const details = issueDetails(result.issues)
  const first = details[0]
  const message = first ? first.message : 'a parameter is invalid'
  throw new ApiError(400, 'invalid_parameter', message, details)
}

/** Exactly one of two fields; neither or both is a 422 naming them. */
export function requireOneOf(body: Record<string, unknown>, a: string, b: string): void {
  const given = [a, b].filter((f) => body[f] !== undefined && body[f] !== null)
  if (given.length === 1) return
  const message = given.length === 0 ? `give ${a} or ${b}` : `give ${a} or ${b}, not both`
  throw new ApiError(422, 'validation_failed', 'request body is invalid', [
    { field: given[1] ?? a, code: given.length === 0 ? 'required' : 'not_allowed', message },
  ])
}
