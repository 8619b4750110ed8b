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
import { buildDecisionContext, decisionRecord, resolveDecision } from './decision/index.js'
import {
  isPalisadeError,
  PolicyDeniedError,
  UndefinedTableError,
  withStackDepth,
} from './errors.js'
import { cutLiterals, fillTemplate, type TextTemplate, textTemplate } from './literal-template.js'
import type { AppliedPolicy } from './policy/policy.types.js'
import type { RewriteResult, RewrittenStatement, ShadowOutcome } from './rewrite.types.js'
import { runtimeStats } from './runtime-stats.js'
import type { DecisionLogSink } from './session/compile-session.js'
import type { CompiledSession, TableEntry } from './session/compiled-session.js'
import type { PolicyOutcome, PolicyRuntime } from './session/policy-runtime.js'
import type { ScanPlan } from './session/scan-plan.js'
import { wrapScans } from './transform/scan-wrapping-transformer.js'
import { rewriteShow } from './transform/show-statement.js'
import { transactionSql } from './transform/transaction-statement.js'

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
  const annotated = withShadow(result, sql, session.shadow, options)
  shadowMemo.set(result, annotated)
  return annotated
}

/** Shadow-annotated copies of cached rewrite results, dropped with them. */
const shadowMemo = new WeakMap<RewriteResult, RewriteResult>()

/**
 * Adds to each statement what the session's shadow policies would have done: the same input
 * rewritten against the session with them enforced. Its SQL is thrown away; nothing runs.
 */
function withShadow(
  result: RewriteResult,
  sql: string,
  shadow: NonNullable<CompiledSession['shadow']>,
  options: RewriteOptions,
): RewriteResult {
  let outcomes: ShadowOutcome[]
  try {
    const shadowed = rewriteEnforced(sql, shadow.session, options).statements
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
  const templated = session.hasQueryDecisions ? undefined : rewriteByTemplate(sql, session, options)
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

/** A rewritten statement with its texts as templates (literal-template.ts). */
interface StatementTemplate {
  readonly statement: RewrittenStatement
  readonly sql: TextTemplate
  readonly originalSql: TextTemplate
}

/**
 * The rewrite of `sql` through the template of its shape: made (and checked) by the first
 * statement of that shape, filled with the literals of each later one. Undefined when the
 * statement has no template.
 */
function rewriteByTemplate(
  sql: string,
  session: CompiledSession,
  options: RewriteOptions,
): RewriteResult | undefined {
  const cut = sql.length <= 16_384 ? cutLiterals(sql) : undefined
  if (!cut) return undefined
  const key = cut.key
  const known = session.templateCache.get(key) as readonly StatementTemplate[] | null | undefined
  if (known) {
    runtimeStats.rewriteTemplateHits++
    return fillStatements(known, cut.literals)
  }
  if (known === null) return undefined
  runtimeStats.rewriteMisses++
  let direct: RewriteResult
  try {
    direct = rewriteUncached(sql, session, options)
  } catch (error) {
    session.templateCache.set(key, null)
    throw error
  }
  const templates = templatesOf(cut.key, cut.literals.length, session, options)
  const same =
    templates !== undefined &&
    sameStatements(fillStatements(templates, cut.literals).statements, direct.statements)
  session.templateCache.set(key, same ? templates : null)
  rememberRewrite(sql, session, direct)
  return direct
}

/** Templates of the statements of `key`, if every one is a SELECT whose texts can be read. */
function templatesOf(
  key: string,
  count: number,
  session: CompiledSession,
  options: RewriteOptions,
): StatementTemplate[] | undefined {
  let keyed: RewriteResult
  try {
    keyed = rewriteUncached(key, session, options)
  } catch {
    return undefined
  }
  const templates: StatementTemplate[] = []
  for (const statement of keyed.statements) {
    if (statement.kind !== StatementKind.Select) return undefined
    const sql = textTemplate(statement.sql, count)
    const originalSql = textTemplate(statement.originalSql, count)
    if (!sql || !originalSql) return undefined
    templates.push({ statement, sql, originalSql })
  }
  return templates
}

function fillStatements(
  templates: readonly StatementTemplate[],
  literals: readonly string[],
): RewriteResult {
  const statements = templates.map(({ statement, sql, originalSql }) => ({
    kind: statement.kind,
    statementType: statement.statementType,
    originalSql: fillTemplate(originalSql, literals),
    sql: fillTemplate(sql, literals),
    policiesApplied: statement.policiesApplied,
    facts: statement.facts,
  }))
  return Object.freeze({ statements: Object.freeze(statements) })
}

/** Whether a filled template says exactly what the statement's own rewrite says. */
function sameStatements(
  filled: readonly RewrittenStatement[],
  direct: readonly RewrittenStatement[],
): boolean {
  return (
    filled.length === direct.length &&
    filled.every((f, i) => {
      const d = direct[i] as RewrittenStatement
      return (
        f.kind === d.kind &&
        f.statementType === d.statementType &&
        f.originalSql === d.originalSql &&
        f.sql === d.sql &&
        d.cursor === undefined &&
        d.setting === undefined &&
        JSON.stringify(f.policiesApplied) === JSON.stringify(d.policiesApplied)
      )
    })
  )
}

/** @internal The session's cached rewrite of exactly this text, if any. */
export function cachedRewrite(sql: string, session: CompiledSession): RewriteResult | undefined {
  if (session.hasQueryDecisions) return undefined
  return session.rewriteCache.get(sql) as RewriteResult | undefined
}

/** @internal Caches a rewrite (one made elsewhere too: a rewrite worker) for the session. */
export function rememberRewrite(
  sql: string,
  session: CompiledSession,
  result: RewriteResult,
): void {
  if (!session.hasQueryDecisions && sql.length <= 16_384) session.rewriteCache.set(sql, result)
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
      const rewritten = rewriteQuery(stmt, classified, session, options)
      const statement: RewrittenStatement = {
        kind: classified.kind,
        statementType: classified.statementType,
        originalSql,
        sql: rewritten.sql,
        policiesApplied: rewritten.policiesApplied,
        facts: rewritten.facts,
      }
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
): { sql: string; policiesApplied: AppliedPolicy[]; facts: QueryFacts } {
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
  const rewritten = wrapScans(query, session, analysis, plans)
  const sql = deparseStatement(replaceQuery(stmt, classified, rewritten))
  // A plan prints the expressions it computes: with a keyed-hash mask, that would be its key.
  const key = session.datasource.maskKey
  if (key && classified.kind === StatementKind.Explain && sql.includes(key)) {
    throw new PolicyDeniedError(
      'EXPLAIN is not available for statements that read hash-masked columns',
    )
  }
  return {
    sql,
    policiesApplied: [...applied.values()],
    facts: analysis.facts,
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
    for (const list of Object.values(reference.entry.policies)) {
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

function replaceQuery(stmt: AstNode, classified: ClassifiedStatement, rewritten: AstNode): AstNode {
  if (classified.kind === StatementKind.Select) return rewritten
  if (classified.kind === StatementKind.Explain) {
    const explain = (stmt as { ExplainStmt: Pg.ExplainStmt }).ExplainStmt
    return { ExplainStmt: { ...explain, query: rewritten } }
  }
  const declare = (stmt as { DeclareCursorStmt: Pg.DeclareCursorStmt }).DeclareCursorStmt
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
  const set = (stmt as { VariableSetStmt: Pg.VariableSetStmt }).VariableSetStmt
  const name = (set.name ?? '').toLowerCase()
  if (set.kind !== 'VAR_SET_VALUE') return { name, value: null }
  const arg = set.args?.[0] as { A_Const?: Pg.A_Const } | undefined
  const c = arg?.A_Const
  const value =
    c?.sval?.sval ?? (c?.ival !== undefined ? String(c.ival.ival ?? 0) : (c?.fval?.fval ?? null))
  return { name, value }
}
