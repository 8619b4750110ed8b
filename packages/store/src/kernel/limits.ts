// Row and rate limits of users and roles (docs/roles-and-access.md#limits): shape, checks and
// the tightest-wins merge the data plane applies.
import * as v from 'valibot'

/** What a statement does once more rows than `max_rows_per_statement` would be sent. */
export type RowLimitAction = 'error' | 'truncate'

/** The `limits` of a user or role as stored and as the admin API shows them. */
export interface Limits {
  max_rows_per_statement?: number | null
  on_row_limit?: RowLimitAction
  max_statements_per_minute?: number | null
  max_concurrent_statements?: number | null
}

/** A user's effective limits: the tightest of their own and their roles'; absent keys: none. */
export interface EffectiveLimits {
  maxRowsPerStatement?: number
  onRowLimit?: RowLimitAction
  maxStatementsPerMinute?: number
  maxConcurrentStatements?: number
}

const positiveInt = v.nullish(
  v.pipe(
    v.number('expected an integer'),
    v.integer('expected an integer'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(2_147_483_647, 'must be at most 2147483647'),
  ),
)

/** Body of a `limits` field; unknown keys are refused (a typo must not pass silently). */
export const limitsSchema = v.strictObject(
  {
    max_rows_per_statement: positiveInt,
    on_row_limit: v.nullish(v.picklist(['error', 'truncate'], 'expected error or truncate')),
    max_statements_per_minute: positiveInt,
    max_concurrent_statements: positiveInt,
  },
  'is not a known limit',
)

const KEYS = [
  'max_rows_per_statement',
  'on_row_limit',
  'max_statements_per_minute',
  'max_concurrent_statements',
] as const

/**
 * The stored value of a `limits` field: null when nothing is set (an object of nulls, `{}` or
 * null itself), else the set keys only. `on_row_limit` alone is kept: it says how a row limit
 * reached through a role ends for this user or role's members.
 */
export function normalizeLimits(input: LimitsInput | null): Limits | null {
  if (!input) return null
  const out: Limits = {}
  for (const key of KEYS) {
    const value = input[key]
    if (value !== null && value !== undefined) (out as Record<string, unknown>)[key] = value
  }
  return Object.keys(out).length === 0 ? null : out
}

/** A checked `limits` body: a key set to null clears it (`on_row_limit`: back to `error`). */
export type LimitsInput = v.InferOutput<typeof limitsSchema>

/**
 * PATCH of a `limits` field (docs/roles-and-access.md#limits): keys sent replace the stored
 * ones, a key sent as null clears it, `null` clears them all, absent keeps them.
 */
export function patchLimits(
  stored: Limits | null,
  input: LimitsInput | null | undefined,
): Limits | null {
  if (input === undefined) return stored
  if (input === null) return null
  return normalizeLimits({ ...(stored ?? {}), ...input })
}

/** A stored value read back (loosely typed jsonb) as `Limits`, dropping anything unknown. */
export function storedLimits(value: unknown): Limits | null {
  if (!value || typeof value !== 'object') return null
  const result = v.safeParse(limitsSchema, value)
  return result.success ? normalizeLimits(result.output) : null
}

/**
 * The tightest of several limits (docs/roles-and-access.md#limits): the smallest number of each,
 * and `error` over `truncate` among the `on_row_limit` of those that set one.
 */
export function tightestLimits(all: readonly (Limits | null | undefined)[]): EffectiveLimits {
  const out: EffectiveLimits = {}
  const min = (a: number | undefined, b: number | null | undefined) =>
    b === null || b === undefined ? a : a === undefined ? b : Math.min(a, b)
  let action: RowLimitAction | undefined
  for (const limits of all) {
    if (!limits) continue
    const rows = limits.max_rows_per_statement ?? undefined
    const fewest = min(out.maxRowsPerStatement, rows)
    if (fewest !== undefined) out.maxRowsPerStatement = fewest
    const rate = min(out.maxStatementsPerMinute, limits.max_statements_per_minute)
    if (rate !== undefined) out.maxStatementsPerMinute = rate
    const concurrent = min(out.maxConcurrentStatements, limits.max_concurrent_statements)
    if (concurrent !== undefined) out.maxConcurrentStatements = concurrent
    // A row limit set without `on_row_limit` ends with an error, its default.
    const own = limits.on_row_limit ?? (rows === undefined ? undefined : 'error')
    if (own === 'error') action = 'error'
    else if (own === 'truncate' && action === undefined) action = 'truncate'
  }
  if (out.maxRowsPerStatement !== undefined) out.onRowLimit = action ?? 'error'
  return out
}

/** The effective limits as the admin API shows them (snake case, every key, null: none). */
export function effectiveLimitsView(limits: EffectiveLimits): Required<Limits> {
  return {
    max_rows_per_statement: limits.maxRowsPerStatement ?? null,
    on_row_limit: limits.onRowLimit ?? 'error',
    max_statements_per_minute: limits.maxStatementsPerMinute ?? null,
    max_concurrent_statements: limits.maxConcurrentStatements ?? null,
  }
}

/** Whether any limit is set (a user without one pays nothing per statement). */
export function hasLimits(limits: EffectiveLimits | undefined): limits is EffectiveLimits {
  return (
    limits !== undefined &&
    (limits.maxRowsPerStatement !== undefined ||
      limits.maxStatementsPerMinute !== undefined ||
      limits.maxConcurrentStatements !== undefined)
  )
}
