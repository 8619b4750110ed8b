import type { DecisionEvaluation, DecisionLogLevel } from './decision.types.js'

/** A request to the decision worker. */
export type WorkerRequest =
  | { op: 'compile'; source: string }
  | {
      op: 'evaluate'
      artifact: string | null
      ctx: unknown
      config: unknown
      logLevel: DecisionLogLevel
    }

/** The worker's answer: a value, a compile error (message and position), or a crash message. */
export type WorkerResponse =
  | { ok: true; artifact?: string; evaluation?: DecisionEvaluation }
  | {
      ok: false
      compileError?: { message: string; line?: number; column?: number }
      error?: string
    }

/** Index of the shared flag the worker raises when a response is waiting. */
export const RESPONSE_FLAG = 0
