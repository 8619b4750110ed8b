/**
 * The allowlists of functions and operators, shared by user queries, filter expressions and
 * mask expressions. They are generated from PostgreSQL's own catalogs by reviewed rules
 * (builtin-review.ts → builtins.generated.ts): a built-in is allowed when it reads nothing but
 * its arguments and the clock; a refused built-in says so (42501) with the reviewed reason.
 * Anything else, including user-defined functions in the upstream, is answered as "does not
 * exist".
 */
import { REFUSAL_CATEGORIES, type RefusalCategory } from './builtin-review.js'
import { ALLOWED_FUNCTION_NAMES, OPERATOR_NAMES } from './builtins.generated.js'
import { REFUSED_FUNCTION_NAMES } from './refused-builtins.generated.js'

export { REG_TYPES } from './builtin-review.js'

/** Splits a generated word list. */
export function wordSet(words: string): ReadonlySet<string> {
  return new Set(words.split(/\s+/).filter((w) => w.length > 0))
}

/** Built-in function names that read only their arguments. */
export const FUNCTION_ALLOWLIST: ReadonlySet<string> = wordSet(ALLOWED_FUNCTION_NAMES)

/** Refused built-in function name → the reviewed reason. */
const REFUSED_FUNCTIONS: ReadonlyMap<string, string> = new Map(
  (Object.entries(REFUSED_FUNCTION_NAMES) as [RefusalCategory, string][]).flatMap(
    ([category, names]) =>
      [...wordSet(names)].map((n) => [n, REFUSAL_CATEGORIES[category]] as const),
  ),
)

/**
 * Operators allowed by symbol: every built-in operator is a pure function of its operands.
 * Other names (custom operators defined in the upstream) are refused.
 */
export const OPERATOR_ALLOWLIST: ReadonlySet<string> = wordSet(OPERATOR_NAMES)

/**
 * Functions outside pg_catalog that drivers call, allowed only schema-qualified.
 * `_pg_expandarray` (pgjdbc's getPrimaryKeys) expands an array into (value, position) rows.
 */
const QUALIFIED_ALLOWLIST: ReadonlySet<string> = new Set(['information_schema._pg_expandarray'])

/** Whether a function name (optionally `pg_catalog`-qualified) is on the allowlist. */
export function isAllowedFunction(names: readonly string[]): boolean {
  const builtIn = builtInName(names)
  if (builtIn !== undefined) return FUNCTION_ALLOWLIST.has(builtIn)
  return names.length === 2 && QUALIFIED_ALLOWLIST.has(names.join('.'))
}

/**
 * Why a built-in function is refused, or undefined when the name is allowed or not a built-in
 * (then it is answered as missing).
 */
export function refusedFunctionReason(names: readonly string[]): string | undefined {
  const builtIn = builtInName(names)
  return builtIn === undefined ? undefined : REFUSED_FUNCTIONS.get(builtIn)
}

/** The name of a `pg_catalog` object written unqualified or `pg_catalog`-qualified. */
function builtInName(names: readonly string[]): string | undefined {
  if (names.length === 1) return names[0]
  return names.length === 2 && names[0] === 'pg_catalog' ? names[1] : undefined
}

/** Whether an operator name (optionally `pg_catalog`-qualified, as `OPERATOR(pg_catalog.+)`) is allowed. */
export function isAllowedOperator(names: readonly string[]): boolean {
  const builtIn = builtInName(names)
  return builtIn !== undefined && OPERATOR_ALLOWLIST.has(builtIn)
}
