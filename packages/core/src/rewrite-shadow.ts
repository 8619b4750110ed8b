import { isPalisadeError } from './errors.js'
import type { AppliedPolicy } from './policy/policy.types.js'
import type { RewriteResult, RewrittenStatement, ShadowOutcome } from './rewrite.types.js'
import type { CompiledSession } from './session/compiled-session.js'
import type { PolicyRuntime } from './session/policy-runtime.js'

/** Shadow-annotated copies of cached rewrite results, dropped with them. */
export const shadowMemo = new WeakMap<RewriteResult, RewriteResult>()

/**
 * Adds to each statement what the session's shadow policies would have done: the same input
 * rewritten against the session with them enforced. Its SQL is thrown away; nothing runs.
 */
export function withShadow(
  result: RewriteResult,
  shadow: NonNullable<CompiledSession['shadow']>,
  enforced: (session: CompiledSession) => RewriteResult,
): RewriteResult {
  let outcomes: ShadowOutcome[]
  try {
    const shadowed = enforced(shadow.session).statements
    outcomes = result.statements.map((_, i) => ({
      policies: (shadowed[i]?.policiesApplied ?? []).filter((p) => shadow.ids.has(p.policy_id)),
      wouldDeny: false,
      error: null,
    }))
  } catch (error) {
    const message = isPalisadeError(error) ? error.auditMessage : 'the statement would fail'
    outcomes = result.statements.map((statement) => ({
      policies: shadowPoliciesOf(statement, shadow),
      wouldDeny: true,
      error: message,
    }))
  }
  return Object.freeze({
    statements: Object.freeze(
      result.statements.map((s, i) => Object.freeze({ ...s, shadow: outcomes[i] })),
    ),
  })
}

/**
 * The shadow policies that target a table a statement reads, from the tables the enforced
 * rewrite found in it (for statements the shadow session refused, which says nothing itself).
 */
function shadowPoliciesOf(
  statement: RewrittenStatement,
  shadow: NonNullable<CompiledSession['shadow']>,
): AppliedPolicy[] {
  const found = new Map<string, AppliedPolicy>()
  for (const table of statement.facts?.tables ?? []) {
    const entry = shadow.session.schemas.get(table.schema)?.tables.get(table.table)
    for (const list of Object.values(entry?.policies ?? {})) {
      for (const runtime of list as readonly PolicyRuntime[]) {
        if (!shadow.ids.has(runtime.policy.id) || found.has(runtime.policy.id)) continue
        found.set(runtime.policy.id, runtime.applied(runtime.sessionOutcome() ?? { fire: true }))
      }
    }
  }
  return [...found.values()]
}
