import type { ErrorDetail } from '../kernel/errors.js'

/** The fields of a definition that decide whether a value fits. */
export interface ValueRule {
  valueType: string
  allowedValues: readonly unknown[] | null
}

const MAX_SAFE = 9_007_199_254_740_991

/**
 * Converts an accepted input form to the stored native JSON value (docs/resources.md#users), or returns
 * a detail code when it does not fit: `"3"` → 3, `"true"` → true.
 */
export function coerceValue(
  rule: ValueRule,
  input: unknown,
  options: { listAsJsonString?: boolean } = {},
): { ok: true; value: unknown } | { ok: false; code: string; message: string } {
  const bad = (code: string, message: string) => ({ ok: false as const, code, message })
  let value: unknown
  switch (rule.valueType) {
    case 'string':
      if (typeof input !== 'string') return bad('invalid_type', 'expected a string')
      if (input.length > 1024) return bad('too_long', 'must be at most 1024 characters')
      value = input
      break
    case 'integer': {
      const n = typeof input === 'string' && /^-?\d+$/.test(input.trim()) ? Number(input) : input
      if (typeof n !== 'number' || !Number.isInteger(n)) {
        return bad('invalid_type', 'expected an integer')
      }
      if (Math.abs(n) > MAX_SAFE) return bad('out_of_range', 'integer out of range')
      value = n
      break
    }
    case 'boolean':
      if (input === 'true' || input === 'false') value = input === 'true'
      else if (typeof input === 'boolean') value = input
      else return bad('invalid_type', 'expected a boolean')
      break
    case 'list': {
      let list = input
      if (options.listAsJsonString && typeof input === 'string') {
        try {
          list = JSON.parse(input)
        } catch {
          return bad('invalid_type', 'expected an array of strings')
        }
      }
      if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
        return bad('invalid_type', 'expected an array of strings')
      }
      if (list.length > 100) return bad('too_long', 'at most 100 elements')
      if (list.some((x: string) => x.length > 1024)) {
        return bad('too_long', 'elements must be at most 1024 characters')
      }
      value = [...list]
      break
    }
    default:
      return bad('invalid_type', `unknown value type ${rule.valueType}`)
  }
  const allowed = rule.allowedValues ?? []
  if (allowed.length > 0) {
    const elements = Array.isArray(value) ? value : [value]
    if (!elements.every((e) => allowed.some((a) => a === e))) {
      return bad('not_in_allowed_values', 'value is not in allowed_values')
    }
  }
  return { ok: true, value }
}

/**
 * Validates a whole user attribute map against the `user` definitions; every problem is
 * reported. `null` values mean "not stored" and are dropped.
 */
export function validateUserAttributes(
  definitions: ReadonlyMap<string, ValueRule>,
  input: unknown,
): { value: Record<string, unknown>; details: ErrorDetail[] } {
  const details: ErrorDetail[] = []
  const value: Record<string, unknown> = {}
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return {
      value,
      details: [{ field: 'attributes', code: 'invalid_type', message: 'expected an object' }],
    }
  }
  for (const [key, raw] of Object.entries(input)) {
    const field = `attributes.${key}`
    const rule = definitions.get(key)
    if (!rule) {
      details.push({ field, code: 'unknown_attribute', message: `no user attribute ${key}` })
      continue
    }
    if (raw === null) continue
    const result = coerceValue(rule, raw)
    if (result.ok) value[key] = result.value
    else details.push({ field, code: result.code, message: result.message })
  }
  return { value, details }
}
