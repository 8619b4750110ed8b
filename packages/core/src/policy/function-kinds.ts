import { AGGREGATE_FUNCTION_NAMES, SET_RETURNING_FUNCTION_NAMES } from './builtins.generated.js'
import { wordSet } from './function-allowlist.js'

/** Aggregate and window function names: never allowed in filter or mask expressions. */
export const AGGREGATE_FUNCTIONS: ReadonlySet<string> = wordSet(AGGREGATE_FUNCTION_NAMES)

/** Functions that return sets: they would change a scan's row count inside a filter. */
export const SET_RETURNING_FUNCTIONS: ReadonlySet<string> = wordSet(SET_RETURNING_FUNCTION_NAMES)
