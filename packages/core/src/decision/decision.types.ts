import type { QueryFacts } from '../analyze/query-facts.js'
import type { AccessMode } from '../session-context.types.js'

export type { QueryFacts }

/** How much console output a decision function's evaluations keep (docs/decision-functions.md `log_level`). */
export type DecisionLogLevel = 'off' | 'error' | 'info'

/** A value in `ctx.session.user`: typed by the attribute definition, or null (docs/decision-functions.md#the-context-ctx). */
export type DecisionAttributeValue = string | number | boolean | readonly unknown[] | null

/** `ctx.session.user`: the built-ins plus one key per user attribute definition. */
export type DecisionUser = {
  id: string
  username: string
  roles: string[]
} & Record<string, unknown>

/** The `ctx` argument of `evaluate(ctx, config)`, exactly as docs/decision-functions.md#the-context-ctx describes it. */
export interface DecisionContext {
  session: {
    user: DecisionUser
    time: { now: string; hour: number; day_of_week: string }
    datasource: { name: string; access_mode: AccessMode }
  }
  /** Present only for `query`-context functions. */
  query?: QueryFacts
}

/** What one evaluation produced; `fire` is null whenever `error` is set. */
export interface DecisionEvaluation {
  fire: boolean | null
  error: string | null
  /** Interrupt-handler calls × 10,000, capped at `DECISION_FUEL_LIMIT`. */
  fuelConsumed: number
  /** Wall time of the whole evaluation, sandbox set-up included. */
  timeUs: number
  /** Captured console lines, kept according to the log level. */
  logs: string[]
}

/** One line for the service log: an evaluation error or captured console output. */
export interface DecisionLogEntry {
  level: 'error' | 'info'
  functionId: string
  functionName: string
  message: string
}

/** A policy's decision after the outcome rules of docs/decision-functions.md#outcomes (disabled, missing module, on_error). */
export interface DecisionOutcome {
  fire: boolean
  /** Set when the evaluation failed; `fire` then follows `on_error`. */
  error?: string
  /** Absent when no evaluation ran (function disabled or module missing). */
  evaluation?: DecisionEvaluation
}

/** Input of `POST /api/v1/decision-functions/test`, already validated by the route. */
export interface DecisionTestInput {
  decisionFn: string
  decisionConfig?: unknown
  /** Defaults to `query` when `testContext` has a `query` member, else `session`. */
  evaluateContext?: 'session' | 'query'
  testContext: unknown
}

/** Response body of the test route; `result` is absent after a compile error. */
export interface DecisionTestResult {
  success: boolean
  result?: {
    /** Present only on success. */
    fire?: boolean
    fuel_consumed: number
    time_us: number
    logs: string[]
  }
  error?: string
}
