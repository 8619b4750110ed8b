import { checkAggregation } from './analyze/aggregation-check.js'
import { enforceProjection } from './analyze/projection-check.js'
import { QueryAnalyzer } from './analyze/query-analyzer.js'
import type { QueryFacts } from './analyze/query-facts.js'
import { checkSelectedColumns } from './analyze/selected-columns-check.js'
import {
  type ClassifiedStatement,
  classifyStatement,
  StatementKind,
} from './analyze/statement-classifier.js'
import { deparseStatement } from './ast/deparse.js'
import type { AstNode, Pg } from './ast/node.js'
import { parseSql } from './ast/parse.js'
import { taggedBody } from './ast/tag-dispatch.js'
import { buildDecisionContext, decisionRecord, resolveDecision } from './decision/index.js'
import { PolicyDeniedError, UndefinedTableError, withStackDepth } from './errors.js'
import type { ExplainPlanRequest } from './explain/explain-output.js'
import { explainAsJson } from './explain/explain-request.js'
import { planPolicies } from './explain/plan-policies.js'
import type { AppliedPolicy } from './policy/policy.types.js'
import type { RewriteResult, RewrittenStatement } from './rewrite.types.js'
import { cachedRewrite, rememberRewrite } from './rewrite-cache.js'
import { shadowMemo, withShadow } from './rewrite-shadow.js'
import { rewriteByTemplate } from './rewrite-templates.js'
import { runtimeStats } from './runtime-stats.js'
import type { DecisionLogSink } from './session/compile-session.js'
import type { CompiledSession, TableEntry } from './session/compiled-session.js'
import type { PolicyOutcome } from './session/policy-runtime.js'
import type { ScanPlan } from './session/scan-plan.js'
import { rewriteAggregations, rowIdentityColumns } from './transform/aggregation-rewrite.js'
import { namesCatalogKeys } from './transform/catalog-guard-pass.js'
import { wrapScans } from './transform/scan-wrapping-transformer.js'
import { rewriteShow } from './transform/show-statement.js'
import { transactionSql } from './transform/transaction-statement.js'
import { listsCatalogWholesale } from './virtual-catalog/catalog-listing.js'
import { catalogListsWith } from './virtual-catalog/pg-catalog.js'

export interface RewriteOptions {
  /** Clock for query-context decision functions. */
  now?: () => Date
  onDecisionLog?: DecisionLogSink
}

/**
 * Rewrites client SQL for one compiled session: parse → classify → analyze (resolve tables,
 * allowlist) → decide query-context policies → wrap every scan → deparse. Every statement is
 * checked before any result is returned: if one is rejected the whole input is rejected.
 * Throws `PalisadeError` (with SQLSTATE and audit status).
 *
 * ```ts
 * await loadCore()
 * const session = await compileSession(input)
 * const [stmt] = rewrite('SELECT email FROM orders', session).statements
 * // stmt.sql: SELECT email FROM (SELECT ... FROM public.orders WHERE ... OFFSET 0) AS orders
 * ```
 */
export function rewrite(
  sql: string,
  session: CompiledSession,
  options: RewriteOptions = {},
): RewriteResult {
  const result = rewriteEnforced(sql, session, options)
  if (!session.shadow) return result
  // A cached rewrite comes back as the same object: so can its shadow-annotated copy, unless
  // the shadow policies decide per query (their answer can change from call to call).
  const memo = session.shadow.session.hasQueryDecisions ? undefined : shadowMemo.get(result)
  if (memo) return memo
  const annotated = withShadow(result, session.shadow, (shadowSession) =>
    rewriteEnforced(sql, shadowSession, options),
  )
  shadowMemo.set(result, annotated)
  return annotated
}

function rewriteEnforced(
  sql: string,
  session: CompiledSession,
  options: RewriteOptions,
): RewriteResult {
  const hit = cachedRewrite(sql, session)
  if (hit) {
    runtimeStats.rewriteCacheHits++
    return hit
  }
  // Counts its own template hits and misses.
  const templated = session.hasQueryDecisions
    ? undefined
    : rewriteByTemplate(sql, session, (text) => rewriteUncached(text, session, options))
  // A statement served by its template is not kept by its text: distinct literals would fill
  // the cache with one-off results (memory and garbage collection for nothing).
  if (templated) return templated
  runtimeStats.rewriteMisses++
  const result = rewriteUncached(sql, session, options)
  rememberRewrite(sql, session, result)
  return result
}

function rewriteUncached(
  sql: string,
  session: CompiledSession,
  options: RewriteOptions,
): RewriteResult {
  let statements: RewrittenStatement[]
  try {
    statements = parseSql(sql).map((p) => rewriteStatement(p.stmt, p.text, session, options))
  } catch (error) {
    throw withStackDepth(error)
  }
  return Object.freeze({ statements: Object.freeze(statements) })
}

function rewriteStatement(
  stmt: AstNode,
  originalSql: string,
  session: CompiledSession,
  options: RewriteOptions,
): RewrittenStatement {
  const classified = classifyStatement(stmt)
  const base = { kind: classified.kind, statementType: classified.statementType, originalSql }
  switch (classified.kind) {
    case StatementKind.Show:
      return { ...base, ...rewriteShow(stmt, session), policiesApplied: [], facts: undefined }
    case StatementKind.Transaction:
      return {
        ...base,
        sql: transactionSql(stmt),
        policiesApplied: [],
        facts: undefined,
      }
    case StatementKind.Set:
      return {
        ...base,
        sql: deparseStatement(stmt),
        policiesApplied: [],
        facts: undefined,
        setting: settingOf(stmt),
      }
    case StatementKind.Select:
    case StatementKind.Explain:
    case StatementKind.DeclareCursor: {
      // Built field by field: this is the hot path of every query.
      const rewritten = rewriteQuery(stmt, classified, session, options, originalSql)
      const statement: RewrittenStatement = {
        kind: classified.kind,
        statementType: classified.statementType,
        originalSql,
        sql: rewritten.sql,
        policiesApplied: rewritten.policiesApplied,
        facts: rewritten.facts,
      }
      if (rewritten.explain) return { ...statement, explain: rewritten.explain }
      if (classified.kind !== StatementKind.DeclareCursor) return statement
      return { ...statement, cursor: cursorOf(stmt) }
    }
    case StatementKind.Fetch:
    case StatementKind.CloseCursor:
      return {
        ...base,
        sql: deparseStatement(stmt),
        policiesApplied: [],
        facts: undefined,
        cursor: cursorOf(stmt),
      }
    default:
      return { ...base, sql: deparseStatement(stmt), policiesApplied: [], facts: undefined }
  }
}

function rewriteQuery(
  stmt: AstNode,
  classified: ClassifiedStatement,
  session: CompiledSession,
  options: RewriteOptions,
  originalSql: string,
): {
  sql: string
  policiesApplied: AppliedPolicy[]
  facts: QueryFacts
  explain?: ExplainPlanRequest
} {
  const query = classified.query as AstNode
  const analysis = new QueryAnalyzer(session).analyze(query, classified.statementType)
  const outcomes = decideQueryPolicies(
    analysis.references.values(),
    analysis.facts,
    session,
    options,
  )
  const plans = new Map<TableEntry, ScanPlan>()
  const applied = new Map<string, AppliedPolicy>()
  for (const reference of analysis.references.values()) {
    if ((reference.kind !== 'table' && reference.kind !== 'view') || plans.has(reference.entry))
      continue
    const plan = session.planFor(reference.entry, outcomes)
    // Hidden and missing tables take the same path and produce the same error.
    if (!plan) throw new UndefinedTableError(reference.written)
    if (plan.error) throw plan.error
    plans.set(reference.entry, plan)
    for (const entry of plan.applied)
      if (!applied.has(entry.policy_id)) applied.set(entry.policy_id, entry)
  }
  checkSelectedColumns(query, analysis, plans)
  const projected = enforceProjection(query, analysis, plans)
  const aggregating = checkAggregation(projected, analysis, plans)
  session.catalogListsRead.clear()
  session.catalogProbes = namesCatalogKeys(analysis.pushdowns)
  session.catalogListing =
    [...analysis.references.values()].some((r) => r.kind === 'pg_catalog') &&
    listsCatalogWholesale(query)
  const enforced = aggregating ? rewriteAggregations(projected, aggregating) : projected
  const rowIdentity = aggregating ? rowIdentityColumns(aggregating) : undefined
  const wrapped = wrapScans(enforced, session, analysis, plans, rowIdentity)
  const rewritten = withCatalogLists(wrapped, session)
  const replaced = replaceQuery(stmt, classified, rewritten)
  if (classified.kind !== StatementKind.Explain) {
    return {
      sql: deparseStatement(replaced),
      policiesApplied: [...applied.values()],
      facts: analysis.facts,
    }
  }
  // The upstream plans in JSON; the proxy redacts the tree and prints the client's format.
  const { stmt: asJson, options: explainOptions } = explainAsJson(replaced)
  const sql = deparseStatement(asJson)
  // A plan prints the expressions it computes: with a keyed-hash mask, that would be its key.
  const key = session.datasource.maskKey
  if (key && sql.includes(key)) {
    throw new PolicyDeniedError(
      'EXPLAIN is not available for statements that read hash-masked columns',
    )
  }
  return {
    sql,
    policiesApplied: [...applied.values()],
    facts: analysis.facts,
    explain: {
      options: explainOptions,
      policies: planPolicies(session, plans, originalSql),
      fullSql: deparseStatement(replaced),
    },
  }
}

/** Evaluates each query-context decision function of the referenced tables once. */
function decideQueryPolicies(
  references: Iterable<{ kind: string; entry?: TableEntry }>,
  facts: QueryFacts,
  session: CompiledSession,
  options: RewriteOptions,
): ReadonlyMap<string, PolicyOutcome> {
  const outcomes = new Map<string, PolicyOutcome>()
  if (!session.hasQueryDecisions) return outcomes
  let ctx: ReturnType<typeof buildDecisionContext> | undefined
  for (const reference of references) {
    if (!reference.entry?.dynamic) continue
    // A parent's scan reads its descendants' rows under their own policies too.
    const tables = [reference.entry, ...(reference.entry.descendants ?? [])]
    for (const list of tables.flatMap((t) => Object.values(t.policies))) {
      for (const runtime of list as typeof reference.entry.policies.rowFilters) {
        const binding = runtime.policy.decision
        if (runtime.state !== 'query' || !binding || outcomes.has(runtime.policy.id)) continue
        ctx ??= buildDecisionContext({
          user: session.user,
          datasource: session.datasource,
          attributeDefinitions: session.attributeDefinitions,
          now: (options.now ?? (() => new Date()))(),
          query: facts,
        })
        const result = resolveDecision(binding, ctx, options.onDecisionLog)
        outcomes.set(runtime.policy.id, { fire: result.fire, decision: decisionRecord(result) })
      }
    }
  }
  return outcomes
}

/** The rewritten query with the visible lists its catalog relations read in its WITH, first. */
function withCatalogLists(query: AstNode, session: CompiledSession): AstNode {
  if (session.catalogListsRead.size === 0) return query
  const select = taggedBody(query, 'SelectStmt')
  const lists = catalogListsWith(session, session.catalogListsRead)
  const own = select.withClause
  const withClause = { ...own, ctes: [...lists, ...(own?.ctes ?? [])] }
  return { SelectStmt: { ...select, withClause } }
}

function replaceQuery(stmt: AstNode, classified: ClassifiedStatement, rewritten: AstNode): AstNode {
  if (classified.kind === StatementKind.Select) return rewritten
  if (classified.kind === StatementKind.Explain) {
    const explain = taggedBody(stmt, 'ExplainStmt')
    return { ExplainStmt: { ...explain, query: rewritten } }
  }
  const declare = taggedBody(stmt, 'DeclareCursorStmt')
  return { DeclareCursorStmt: { ...declare, query: rewritten } }
}

/** PostgreSQL's CURSOR_OPT_HOLD bit of `DeclareCursorStmt.options`. */
const CURSOR_OPT_HOLD = 0x0020

/** The cursor a DECLARE, FETCH/MOVE or CLOSE names (null: CLOSE ALL). */
function cursorOf(stmt: AstNode): { name: string | null; hold: boolean } {
  const body = Object.values(stmt)[0] as { portalname?: string; options?: number }
  return {
    name: body.portalname ?? null,
    hold: ((body.options ?? 0) & CURSOR_OPT_HOLD) !== 0,
  }
}

function settingOf(stmt: AstNode): { name: string; value: string | null } {
  const set = taggedBody(stmt, 'VariableSetStmt')
  const name = (set.name ?? '').toLowerCase()
  if (set.kind !== 'VAR_SET_VALUE') return { name, value: null }
  const arg = set.args?.[0] as { A_Const?: Pg.A_Const } | undefined
  const c = arg?.A_Const
  const value =
    c?.sval?.sval ?? (c?.ival !== undefined ? String(c.ival.ival ?? 0) : (c?.fval?.fval ?? null))
  return { name, value }
}
