import { expressionText } from '../ast/deparse.js'
import { type AstNode, bodyOf, type Pg } from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import type { CompiledSession, TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'

/** One relation the rewrite wraps, by its upstream name, as a plan names it. */
export interface PolicedRelation {
  readonly schema: string
  readonly table: string
  /** A row filter applies: the scan's conditions hold injected conjuncts. */
  readonly filtered: boolean
  readonly denied: readonly string[]
}

/**
 * What a plan of this session's statement must not show, in plain data (it crosses the
 * rewrite worker's boundary): what the rewrite injected, what the session hides, and what the
 * user wrote (theirs to see back).
 */
export interface PlanPolicies {
  readonly relations: readonly PolicedRelation[]
  /** `schema.table` (upstream names) of the visible relations the statement could scan. */
  readonly visible: readonly string[]
  /** Upstream schema name → the name the session shows, where they differ. */
  readonly schemaAliases: readonly (readonly [string, string])[]
  /** Injected mask expressions, as deparsed. */
  readonly masks: readonly string[]
  /** String literals of injected filters and masks (a tenant name, a mask's text). */
  readonly literals: readonly string[]
  readonly userSql: string
}

/** Collects the plan policies of one statement from the session and the statement's scan plans. */
export function planPolicies(
  session: CompiledSession,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
  userSql: string,
): PlanPolicies {
  const relations: PolicedRelation[] = []
  const visible: string[] = []
  const schemaAliases: [string, string][] = []
  const masks = new Set<string>()
  const literals = new Set<string>()
  for (const schema of session.schemas.values()) {
    if (schema.visible !== schema.upstream) schemaAliases.push([schema.upstream, schema.visible])
    // A plan scans only relations the rewrite resolved, and so built: with thousands of
    // exposed tables the others are never built for an EXPLAIN.
    for (const entry of schema.tables.built()) {
      const plan = plans.get(entry) ?? entry.plan
      if (!plan) continue
      visible.push(`${plan.table.schema}.${plan.table.name}`)
      if (!plan.filtered && plan.masked.size === 0 && plan.denied.size === 0) continue
      relations.push({
        schema: plan.table.schema,
        table: plan.table.name,
        filtered: plan.filtered,
        denied: [...plan.denied],
      })
      for (const text of [plan.fragments?.whereText, ...maskTexts(plan)]) {
        if (text === undefined) continue
        for (const match of text.matchAll(/'((?:[^']|'')*)'/g)) {
          const literal = (match[1] ?? '').replaceAll("''", "'")
          if (literal.length >= 2) literals.add(literal)
        }
      }
      for (const mask of maskTexts(plan)) masks.add(mask)
    }
  }
  return {
    relations,
    visible,
    schemaAliases,
    masks: [...masks],
    literals: [...literals],
    userSql,
  }
}

/** The mask expressions of a scan, read back from its deparsed select list. */
function maskTexts(plan: ScanPlan): string[] {
  if (plan.masked.size === 0 || !plan.fragments) return []
  const [parsed] = parseSql(plan.fragments.head)
  const select = bodyOf<Pg.SelectStmt>(parsed?.stmt, 'SelectStmt')
  const out: string[] = []
  for (const target of select?.targetList ?? []) {
    const res = bodyOf<Pg.ResTarget>(target, 'ResTarget')
    if (res?.name && plan.masked.has(res.name)) out.push(expressionText(res.val as AstNode))
  }
  return out
}
