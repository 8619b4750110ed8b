/**
 * Fuel budget of one evaluation (docs/decision-functions.md#limits): system-wide, not configurable per function.
 * Counted through QuickJS's interrupt handler; see `FUEL_PER_INTERRUPT`.
 */
export const DECISION_FUEL_LIMIT = 1_000_000

/**
 * Fuel charged per interrupt-handler call. QuickJS decrements a counter at every function call
 * and loop back-edge and calls the handler when 10,000 of them have passed
 * (`JS_INTERRUPT_COUNTER_INIT`), so one call stands for 10,000 such steps.
 */
export const FUEL_PER_INTERRUPT = 10_000

/** Wall-clock backstop for one evaluation, checked at each interrupt-handler call. */
export const DECISION_TIME_LIMIT_MS = 100

/** Heap limit of one sandbox; also bounds the cost of any single built-in call. */
export const DECISION_MEMORY_LIMIT_BYTES = 8 * 1024 * 1024

/**
 * QuickJS stack limit while code runs. Kept small because each byte of QuickJS stack costs
 * up to about 11 bytes of the host's native stack (measured with nested `JSON.stringify`).
 */
export const DECISION_STACK_LIMIT_BYTES = 24 * 1024

/**
 * Stack limit while a source is parsed at save time. The parser costs up to about 25 host bytes
 * per QuickJS byte, so deeply nested sources are refused here rather than parsed at every
 * evaluation; 12 KB still allows about 40 nested blocks or 180 nested brackets.
 */
export const DECISION_PARSE_STACK_LIMIT_BYTES = 12 * 1024

/** Console lines captured per evaluation; later lines are counted, not kept. */
export const DECISION_LOG_MAX_LINES = 100

/** Characters kept per console line. */
export const DECISION_LOG_MAX_LINE_CHARS = 1_000

/** Longest error message an evaluation reports. */
export const DECISION_ERROR_MAX_CHARS = 500
