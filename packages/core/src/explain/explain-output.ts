import { PolicyDeniedError } from '../errors.js'
import type { ExplainOptions } from './explain-request.js'
import { normalizeExpression } from './plan-expressions.js'
import { planJson, planXml, planYaml } from './plan-formats.js'
import type { PlanPolicies } from './plan-policies.js'
import { type PlanNode, redactPlan } from './plan-redaction.js'
import { planText } from './plan-text.js'

/** What a rewritten EXPLAIN carries so the proxy can redact and print its plan. */
export interface ExplainPlanRequest {
  readonly options: ExplainOptions
  readonly policies: PlanPolicies
  /** The rewritten EXPLAIN in the client's own format, unredacted: for an admin's preview. */
  readonly fullSql: string
}

/** Schemas whose relations a plan may always name: the virtual catalogs read them. */
const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema'])

/**
 * The rows of an EXPLAIN as the client asked for it, from the upstream's JSON plan of the
 * rewritten statement: policy internals redacted (plan-redaction.ts), then printed in the
 * requested format (TEXT: one row per line). Fails closed with 42501 when the redacted plan
 * would still show a hidden relation, a denied column, an injected literal or a mask.
 *
 * ```ts
 * const rows = explainRows(upstreamJson, statement.explain)
 * ```
 */
export function explainRows(json: string, request: ExplainPlanRequest): string[] {
  const queries = (JSON.parse(json) as Record<string, unknown>[]).map((query) => {
    const plan = query['Plan'] as PlanNode | undefined
    return plan ? { ...query, Plan: redactPlan(plan, request.policies) } : query
  })
  checkNothingShows(queries, request.policies)
  switch (request.options.format) {
    case 'json':
      return [planJson(queries)]
    case 'yaml':
      return [planYaml(queries)]
    case 'xml':
      return [planXml(queries)]
    default:
      return planText(queries, request.options.verbose)
  }
}

/** The safety net behind the redaction: refuse rather than show what the policies hide. */
function checkNothingShows(queries: readonly unknown[], policies: PlanPolicies): void {
  const refuse = () => {
    throw new PolicyDeniedError('EXPLAIN is not available for this statement')
  }
  const visible = new Set(policies.visible)
  const visibleNames = new Set(policies.visible.map((name) => name.slice(name.indexOf('.') + 1)))
  const aliases = new Map(policies.schemaAliases.map(([upstream, shown]) => [shown, upstream]))
  const texts: string[] = []
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value)
    else if (Array.isArray(value)) for (const item of value) walk(item)
    else if (value !== null && typeof value === 'object') {
      const node = value as PlanNode
      const relation = node['Relation Name']
      if (typeof relation === 'string') {
        const shown = node['Schema']
        const schema = typeof shown === 'string' ? (aliases.get(shown) ?? shown) : undefined
        const known =
          schema === undefined
            ? visibleNames.has(relation) || relation.startsWith('pg_')
            : SYSTEM_SCHEMAS.has(schema) || visible.has(`${schema}.${relation}`)
        if (!known) refuse()
      }
      for (const item of Object.values(node)) walk(item)
    }
  }
  walk(queries)
  const text = texts.join('\n')
  const userSql = policies.userSql
  const lowerUser = userSql.toLowerCase()
  for (const literal of policies.literals) {
    if (text.includes(literal) && !userSql.includes(literal)) refuse()
  }
  for (const relation of policies.relations) {
    for (const column of relation.denied) {
      const word = new RegExp(`(^|[^a-z0-9_$])${escapeRegExp(column)}($|[^a-z0-9_$])`, 'i')
      if (word.test(text) && !lowerUser.includes(column.toLowerCase())) refuse()
    }
  }
  const normalText = normalizeExpression(text)
  const normalUser = normalizeExpression(userSql)
  for (const mask of policies.masks.map(normalizeExpression)) {
    // A NULL or a bare column tells nothing about the rule.
    if (mask.length < 3 || mask === 'null' || /^[a-z_][a-z0-9_$]*$/.test(mask)) continue
    if (normalText.includes(mask) && !normalUser.includes(mask)) refuse()
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
