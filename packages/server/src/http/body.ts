import { ApiError } from './api-error.js'

/** Largest accepted request body (docs/admin-api.md#conventions). */
export const MAX_BODY_BYTES = 1024 * 1024

/** `application/json`, optionally with parameters such as `charset=utf-8`. */
const JSON_TYPE = /^application\/json\s*(;|$)/i

function tooLarge(): ApiError {
  return new ApiError(413, 'payload_too_large', 'the request body is larger than 1 MiB')
}

function unsupported(): ApiError {
  return new ApiError(415, 'unsupported_media_type', 'the request body must be application/json')
}

/**
 * Step 3 of the check order: reads the raw body (at most 1 MiB + 1 byte, so a huge chunked
 * body is never buffered whole) and enforces the content type (415) and size (413).
 * Returns null when the request carries no body.
 */
export async function readRawBody(request: Request): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  const isJson = JSON_TYPE.test(request.headers.get('content-type') ?? '')
  if (declared > 0 && !isJson) throw unsupported()
  if (declared > MAX_BODY_BYTES) throw tooLarge()
  if (request.body === null) return null
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel()
      if (!isJson) throw unsupported()
      throw tooLarge()
    }
    chunks.push(value)
  }
  if (size === 0) return null
  if (!isJson) throw unsupported()
  return Buffer.concat(chunks)
}

/** Step 5: parses JSON text, or 400 malformed_json; an empty required body is malformed too. */
export function parseJsonBody(raw: Uint8Array | null, required: boolean): unknown {
  if (raw === null) {
    if (required) throw new ApiError(400, 'malformed_json', 'a json request body is required')
    return undefined
  }
  let value: unknown
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(raw)
    value = JSON.parse(text)
  } catch {
    throw new ApiError(400, 'malformed_json', 'the request body is not valid json')
  }
  checkJsonShape(value)
  return value
}

/** Deeper bodies are refused: no resource nests anywhere near this. */
const MAX_BODY_DEPTH = 32

/**
 * Refuses what no field may hold and what the store could not keep: nesting deeper than
 * `MAX_BODY_DEPTH` (400) and NUL characters, which PostgreSQL text cannot store (422, with the
 * field). Walks without recursion, so a hostile body cannot exhaust the stack.
 */
function checkJsonShape(root: unknown): void {
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: root, path: '', depth: 0 },
  ]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path, depth } = item
    if (typeof value === 'string') {
      if (value.includes('\0')) throw nulCharacter(path || 'body')
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth >= MAX_BODY_DEPTH) {
      throw new ApiError(
        400,
        'malformed_json',
        `the request body nests deeper than ${MAX_BODY_DEPTH} levels`,
      )
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        stack.push({ value: v, path: `${path}[${i}]`, depth: depth + 1 })
      })
      continue
    }
    for (const [key, v] of Object.entries(value)) {
      const field = path ? `${path}.${key}` : key
      if (key.includes('\0')) throw nulCharacter(path || 'body')
      stack.push({ value: v, path: field, depth: depth + 1 })
    }
  }
}

function nulCharacter(field: string): ApiError {
  return new ApiError(422, 'validation_failed', 'request body is invalid', [
    { field, code: 'pattern', message: `${field} must not contain NUL characters` },
  ])
}

/** Path and query parameters holding a NUL character: 400 invalid_parameter (step 4). */
export function checkParameterText(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value.includes('\0') || name.includes('\0')) {
      throw new ApiError(400, 'invalid_parameter', `${name} must not contain NUL characters`, [
        { field: name, code: 'pattern', message: `${name} must not contain NUL characters` },
      ])
    }
  }
}
