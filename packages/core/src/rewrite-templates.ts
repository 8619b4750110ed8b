import { StatementKind } from './analyze/statement-classifier.js'
import { constantOnlyParameters, literalParameters } from './literal-parameters.js'
import { cutLiterals, fillTemplate, type TextTemplate, textTemplate } from './literal-template.js'
import type { RewriteResult, RewrittenStatement } from './rewrite.types.js'
import { rememberRewrite } from './rewrite-cache.js'
import { runtimeStats } from './runtime-stats.js'
import type { CompiledSession } from './session/compiled-session.js'

/** A rewritten statement with its texts as templates (literal-template.ts). */
interface StatementTemplate {
  readonly statement: RewrittenStatement
  readonly sql: TextTemplate
  readonly originalSql: TextTemplate
  /** `$n` that must stay literal text upstream; undefined: no literal becomes a parameter. */
  readonly constantOnly: ReadonlySet<number> | undefined
}

/**
 * The rewrite of `sql` through the template of its shape: made (and checked) by the first
 * statement of that shape, filled with the literals of each later one. Undefined when the
 * statement has no template.
 */
export function rewriteByTemplate(
  sql: string,
  session: CompiledSession,
  uncached: (text: string) => RewriteResult,
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
    direct = uncached(sql)
  } catch (error) {
    session.templateCache.set(key, null)
    throw error
  }
  const templates = templatesOf(cut.key, cut.literals.length, uncached)
  const same =
    templates !== undefined &&
    sameStatements(fillStatements(templates, cut.literals).statements, direct.statements)
  session.templateCache.set(key, same ? templates : null)
  // The filled templates say what `direct` says, with the literal parameters beside it.
  const result = same ? fillStatements(templates, cut.literals) : direct
  rememberRewrite(sql, session, result)
  return result
}

/** Templates of the statements of `key`, if every one is a SELECT whose texts can be read. */
function templatesOf(
  key: string,
  count: number,
  uncached: (text: string) => RewriteResult,
): StatementTemplate[] | undefined {
  let keyed: RewriteResult
  try {
    keyed = uncached(key)
  } catch {
    return undefined
  }
  const templates: StatementTemplate[] = []
  for (const statement of keyed.statements) {
    if (statement.kind !== StatementKind.Select) return undefined
    const sql = textTemplate(statement.sql, count)
    const originalSql = textTemplate(statement.originalSql, count)
    if (!sql || !originalSql) return undefined
    templates.push({
      statement,
      sql,
      originalSql,
      constantOnly: constantOnlyParameters(statement.sql),
    })
  }
  return templates
}

function fillStatements(
  templates: readonly StatementTemplate[],
  literals: readonly string[],
): RewriteResult {
  const statements = templates.map(({ statement, sql, originalSql, constantOnly }) => {
    const parameters = constantOnly && literalParameters(sql, constantOnly, literals)
    return {
      kind: statement.kind,
      statementType: statement.statementType,
      originalSql: fillTemplate(originalSql, literals),
      sql: fillTemplate(sql, literals),
      policiesApplied: statement.policiesApplied,
      facts: statement.facts,
      ...(parameters ? { parameters } : {}),
      template: { originalSql: statement.originalSql, sql: statement.sql, literals },
    }
  })
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
