import { isPalisadeError } from '../errors.js'
import { STATISTIC_AGGREGATES, VALUE_REVEALING_AGGREGATES } from './aggregate-kinds.js'
import type { PolicyTarget, PolicyType } from './policy.types.js'
import { parsePolicyExpression } from './policy-expression.js'
import { MAX_TAG_LENGTH, TAG_PATTERN } from './tag-targets.js'
import { MASKED_COLUMN } from './template-placeholders.js'

/** One failing field, in the admin API's `details` shape. */
export interface ValidationDetail {
  field: string
  code: string
  message: string
}

export type PolicyValidation =
  | { ok: true }
  | { ok: false; error: 'validation_failed' | 'invalid_expression'; details: ValidationDetail[] }

export interface PolicyDefinitionInput {
  policyType: PolicyType
  targets: readonly PolicyTarget[]
  filterExpression?: string | null | undefined
  maskExpression?: string | null | undefined
  /** `aggregation` only: an integer from 2 to 1,000,000. */
  minGroupSize?: number | null | undefined
  /** `aggregation` only: names from `VALUE_REVEALING_AGGREGATES`, at most 40. */
  allowedAggregates?: readonly string[] | null | undefined
}

const NEEDS_COLUMNS: ReadonlySet<PolicyType> = new Set([
  'column_mask',
  'column_allow',
  'column_deny',
  'projection',
])

/** The bounds of an aggregation policy's `min_group_size` (docs/policies.md#aggregation). */
export const MIN_GROUP_SIZE = { min: 2, max: 1_000_000 } as const
/** The most value-revealing aggregates one aggregation policy may allow. */
export const MAX_ALLOWED_AGGREGATES = 40

const valueRevealing: ReadonlySet<string> = new Set(VALUE_REVEALING_AGGREGATES)

/**
 * Validates a policy definition as docs/resources.md#policies says, in its order: shape by type first
 * (422 `validation_failed`), then the expressions with the query-time parser
 * (422 `invalid_expression`). Requires `loadCore()`.
 */
export function validatePolicy(input: PolicyDefinitionInput): PolicyValidation {
  const details = checkShape(input)
  if (details.length > 0) return { ok: false, error: 'validation_failed', details }
  const expressionDetails: ValidationDetail[] = []
  for (const [field, text] of [
    ['filter_expression', input.filterExpression],
    ['mask_expression', input.maskExpression],
  ] as const) {
    if (text === null || text === undefined) continue
    const result = validateExpression(text, { isMask: field === 'mask_expression' })
    if (!result.valid) expressionDetails.push({ field, code: 'parse_error', message: result.error })
  }
  if (expressionDetails.length > 0)
    return { ok: false, error: 'invalid_expression', details: expressionDetails }
  return { ok: true }
}

function checkShape(input: PolicyDefinitionInput): ValidationDetail[] {
  const details: ValidationDetail[] = []
  const type = input.policyType
  const targets = input.targets
  if (targets.length < 1 || targets.length > 50) {
    details.push({
      field: 'targets',
      code: targets.length < 1 ? 'too_short' : 'too_long',
      message: 'targets must have 1 to 50 entries',
    })
  }
  targets.forEach((target, i) => {
    const tagged = target.tags !== null && target.tags !== undefined
    if (tagged) checkTags(details, `targets[${i}].tags`, target.tags as readonly string[])
    // A tag target may leave out the name patterns (they then match everything).
    if (!tagged || target.schemas !== undefined)
      checkPatterns(details, `targets[${i}].schemas`, target.schemas)
    if (!tagged || target.tables !== undefined)
      checkPatterns(details, `targets[${i}].tables`, target.tables)
    const columns = target.columns
    if (NEEDS_COLUMNS.has(type)) {
      if (tagged && (columns === null || columns === undefined)) {
        // Every tagged column of the matching tables.
      } else if (!columns || columns.length === 0) {
        details.push({
          field: `targets[${i}].columns`,
          code: 'required',
          message: `${type} needs a non-empty columns array`,
        })
      } else checkPatterns(details, `targets[${i}].columns`, columns)
    } else if (columns !== null && columns !== undefined) {
      details.push({
        field: `targets[${i}].columns`,
        code: 'not_allowed',
        message: `${type} does not take columns`,
      })
    }
  })
  const hasFilter = input.filterExpression !== null && input.filterExpression !== undefined
  const hasMask = input.maskExpression !== null && input.maskExpression !== undefined
  if (type === 'row_filter' && !hasFilter) {
    details.push({
      field: 'filter_expression',
      code: 'required',
      message: 'row_filter needs a filter_expression',
    })
  }
  if (type !== 'row_filter' && hasFilter) {
    details.push({
      field: 'filter_expression',
      code: 'not_allowed',
      message: `${type} does not take a filter_expression`,
    })
  }
  if (type === 'column_mask' && !hasMask) {
    details.push({
      field: 'mask_expression',
      code: 'required',
      message: 'column_mask needs a mask_expression',
    })
  }
  if (type !== 'column_mask' && hasMask) {
    details.push({
      field: 'mask_expression',
      code: 'not_allowed',
      message: `${type} does not take a mask_expression`,
    })
  }
  checkAggregationFields(details, input)
  return details
}

/** `min_group_size` and `allowed_aggregates`: required and bounded on `aggregation`, refused elsewhere. */
function checkAggregationFields(details: ValidationDetail[], input: PolicyDefinitionInput): void {
  const type = input.policyType
  const size = input.minGroupSize
  const allowed = input.allowedAggregates
  if (type !== 'aggregation') {
    for (const [field, value] of [
      ['min_group_size', size],
      ['allowed_aggregates', allowed],
    ] as const) {
      if (value === null || value === undefined) continue
      details.push({ field, code: 'not_allowed', message: `${type} does not take ${field}` })
    }
    return
  }
  if (size === null || size === undefined) {
    details.push({
      field: 'min_group_size',
      code: 'required',
      message: 'aggregation needs a min_group_size',
    })
  } else if (
    typeof size !== 'number' ||
    !Number.isInteger(size) ||
    size < MIN_GROUP_SIZE.min ||
    size > MIN_GROUP_SIZE.max
  ) {
    details.push({
      field: 'min_group_size',
      code: 'out_of_range',
      message: `min_group_size must be an integer from ${MIN_GROUP_SIZE.min} to 1,000,000`,
    })
  }
  if (allowed === null || allowed === undefined) return
  if (!Array.isArray(allowed) || allowed.length > MAX_ALLOWED_AGGREGATES) {
    details.push({
      field: 'allowed_aggregates',
      code: Array.isArray(allowed) ? 'too_long' : 'invalid_type',
      message: `allowed_aggregates is an array of at most ${MAX_ALLOWED_AGGREGATES} aggregate names`,
    })
    return
  }
  const seen = new Set<string>()
  allowed.forEach((name, i) => {
    const field = `allowed_aggregates[${i}]`
    if (typeof name !== 'string') {
      details.push({ field, code: 'invalid_type', message: 'an aggregate name is a string' })
    } else if (seen.has(name)) {
      details.push({ field, code: 'duplicate', message: `${name} is listed twice` })
    } else if (STATISTIC_AGGREGATES.has(name)) {
      details.push({
        field,
        code: 'invalid_enum',
        message: `${name} returns a statistic of the group and is always allowed: list only value-revealing aggregates`,
      })
    } else if (!valueRevealing.has(name)) {
      details.push({
        field,
        code: 'invalid_enum',
        message: `${name} is not a value-revealing aggregate (lowercase names such as min, max, array_agg)`,
      })
    }
    if (typeof name === 'string') seen.add(name)
  })
}

function checkTags(details: ValidationDetail[], field: string, tags: readonly string[]): void {
  if (!Array.isArray(tags) || tags.length < 1 || tags.length > 20) {
    details.push({ field, code: 'too_short', message: 'tags must have 1 to 20 entries' })
    return
  }
  tags.forEach((tag, i) => {
    if (typeof tag !== 'string' || tag.length > MAX_TAG_LENGTH || !TAG_PATTERN.test(tag)) {
      details.push({
        field: `${field}[${i}]`,
        code: 'pattern',
        message: 'a tag is dot-separated lowercase words, like pii.email',
      })
    }
  })
}

function checkPatterns(
  details: ValidationDetail[],
  field: string,
  patterns: readonly string[] | undefined,
): void {
  if (!patterns || patterns.length < 1 || patterns.length > 100) {
    details.push({
      field,
      code: !patterns || patterns.length < 1 ? 'required' : 'too_long',
      message: 'must have 1 to 100 patterns',
    })
    return
  }
  patterns.forEach((pattern, i) => {
    if (typeof pattern !== 'string' || pattern.length < 1 || pattern.length > 128) {
      details.push({
        field: `${field}[${i}]`,
        code: 'too_long',
        message: 'a pattern has 1 to 128 characters',
      })
    } else if (hasControlCharacter(pattern)) {
      details.push({
        field: `${field}[${i}]`,
        code: 'pattern',
        message: 'a pattern may not contain control characters',
      })
    }
  })
}

/**
 * Parses one filter or mask expression as at query time (docs/policies.md#expressions) and lists the `{user.*}`
 * keys it uses. Requires `loadCore()`.
 */
export function validateExpression(
  expression: string,
  options: { isMask?: boolean } = {},
): { valid: true; variables: string[]; masks: string[] } | { valid: false; error: string } {
  try {
    const parsed = parsePolicyExpression(expression)
    if (!options.isMask && parsed.masks.length > 0) {
      return {
        valid: false,
        error: `mask.${parsed.masks[0]} is a library mask: it belongs in a mask_expression`,
      }
    }
    if (!options.isMask && parsed.columns.includes(MASKED_COLUMN)) {
      return { valid: false, error: '{column} (the masked column) belongs in a mask_expression' }
    }
    return { valid: true, variables: [...parsed.variables], masks: [...parsed.masks] }
  } catch (error) {
    if (isPalisadeError(error)) return { valid: false, error: error.message }
    throw error
  }
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
