import type { QueryFacts } from './analyze/query-facts.js'
import type { StatementKind } from './analyze/statement-classifier.js'
import type { ExplainPlanRequest } from './explain/explain-output.js'
import type { LiteralParameters } from './literal-parameters.js'
import type { AppliedPolicy } from './policy/policy.types.js'

/** One statement of the client's input, ready for the upstream. */
export interface RewrittenStatement {
  readonly kind: StatementKind
  /** `SELECT`, `EXPLAIN`, `SHOW`, `BEGIN`, ...: `ctx.query.statement_type` and the audit. */
  readonly statementType: string
  /** The statement as the client wrote it. */
  readonly originalSql: string
  /** The policy-enforced SQL to run upstream (two-part names, filters, masks, fences). */
  readonly sql: string
  /** Policies that applied, with decision results (audit `policies_applied`). */
  readonly policiesApplied: readonly AppliedPolicy[]
  /** Facts for query-context decision functions; absent for statements that read nothing. */
  readonly facts: QueryFacts | undefined
  /** For `SET`: the parameter and new value (null for RESET), so the proxy can track them. */
  readonly setting?: { readonly name: string; readonly value: string | null }
  /**
   * For `DECLARE`, `FETCH`/`MOVE` and `CLOSE`: the cursor named (null for `CLOSE ALL`) and, for
   * `DECLARE`, whether it is `WITH HOLD`, so the proxy can tell which rules opened a cursor.
   */
  readonly cursor?: { readonly name: string | null; readonly hold: boolean }
  /**
   * For `EXPLAIN`: `sql` asks the upstream for a JSON plan; `explainRows(json, explain)` gives
   * the rows the client asked for, with the policies' internals redacted.
   */
  readonly explain?: ExplainPlanRequest
  /** With shadow policies in the session: what they would have done to this statement. */
  readonly shadow?: ShadowOutcome
  /**
   * The same statement with its number literals as parameters (literal-parameters.ts), for an
   * upstream prepared statement shared by every statement of its shape; absent when none is.
   */
  readonly parameters?: LiteralParameters
  /**
   * For a statement filled from a rewrite template (rewrite-templates.ts): both texts with `$n`
   * in the literals' places, and the literals. The audit stores a shape once and only the
   * literals per statement; `fillTemplate(textTemplate(text, n), literals)` gives the texts back.
   */
  readonly template?: StatementTextTemplate
}

/** A statement's original and rewritten texts as `$n` templates, with the literals that fill them. */
export interface StatementTextTemplate {
  readonly originalSql: string
  readonly sql: string
  readonly literals: readonly string[]
}

/** What a session's shadow policies would have done to one statement (never applied). */
export interface ShadowOutcome {
  /** The shadow policies whose targets matched a table the statement reads. */
  readonly policies: readonly AppliedPolicy[]
  /** Whether enforcing them would have refused the statement. */
  readonly wouldDeny: boolean
  /** That refusal as the audit words it, or null. */
  readonly error: string | null
}

/** The result of `rewrite()`: one entry per statement; empty for empty input. */
export interface RewriteResult {
  readonly statements: readonly RewrittenStatement[]
}
