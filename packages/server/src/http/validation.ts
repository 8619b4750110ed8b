import { issueDetails } from '@palisade/store'
import * as v from 'valibot'
import { ApiError } from './api-error.js'

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
