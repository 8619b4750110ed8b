import type { QueryAnalysis } from '../analyze/query-analyzer.js'
import { mapTree, type NodeMapper } from '../ast/map-tree.js'
import {
  type AstNode,
  binaryOp,
  nullConst,
  numberConst,
  type Pg,
  rangeSubselect,
  stringNode,
  stringsOf,
  typeCast,
} from '../ast/node.js'
import { composePasses, nodeBody, type TreePass } from '../ast/tag-dispatch.js'
import type { CompiledSession, TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'
import {
  catalogGuards,
  impliedCatalogGuards,
  virtualCatalogRelation,
} from './catalog-guard-pass.js'
import { cteRenaming, renamedCteReference } from './cte-renaming.js'
import { dependentGroupColumns } from './functional-dependency.js'
import { identitySubstitution } from './identity-substitution.js'
import { inheritedScan } from './inherited-scan.js'
import { innerScan, leakproofConjuncts } from './inner-scan.js'
import { systemColumnUse } from './system-columns.js'
import type { TransformContext } from './transform-context.js'
import { expandView } from './view-expansion.js'
import {
  mayReadWholeRows,
  type WholeRowLevel,
  wholeRowLevel,
  wholeRowType,
} from './whole-row-scope.js'

/**
 * The rewrite's tree transformation, one typed pass per concern (ast/tag-dispatch.ts): this
 * file's scan wrapping replaces every table scan with its policy-enforcing derived table
 * (keeping the user's alias, or the table name) and catalog views with their per-user form;
 * identity-substitution.ts, catalog-guard-pass.ts and cte-renaming.ts do the rest. Copy on
 * write: the cached parse tree is never modified.
 */
export function wrapScans(
  query: AstNode,
  session: CompiledSession,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
  /** System columns some scans' wrappers must carry whatever the user reads (aggregation). */
  forcedSystem?: ReadonlyMap<object, readonly string[]>,
): AstNode {
  const ctx: TransformContext = { session, analysis, map: (value) => mapTree(value, mapper) }
  const scans: TreePass = {
    RangeVar: (rv) => replaceRangeVar(rv, undefined),
    RangeTableSample: (sample) => {
      const relation = nodeBody(sample.relation, 'RangeVar')
      return relation ? replaceRangeVar(relation, sample) : undefined
    },
    SelectStmt: (select) => mapSelect(select),
    // Returning the node itself stops the walk: nothing inside a column reference changes.
    ColumnRef: (ref, node) => wholeRow(ref) ?? shortenQualifiedColumn(ref) ?? node,
    ParamRef: (_param, node) => node,
  }
  // Identity before the catalog guards: `current_schema()` is both.
  const dispatch = composePasses([
    identitySubstitution(ctx),
    catalogGuards(ctx),
    cteRenaming(ctx),
    scans,
  ])
  const guardImplied = impliedCatalogGuards(ctx)
  const mapper: NodeMapper = (node, tag, body) =>
    guardImplied(node, body) ?? dispatch(node, tag, body)

  // System columns a level reads, by the RangeVar whose wrapper must carry them.
  const systemColumns = new Map<object, readonly string[]>()
  // The query levels around the expression being mapped, outermost first (whole-row-scope.ts).
  const levels: WholeRowLevel[] = []
  const wholeRows = mayReadWholeRows(analysis)

  /**
   * A SELECT with its own level pushed while the clauses that see its FROM items are mapped,
   * and the columns that depend on a grouped primary key added to its GROUP BY.
   */
  const mapSelect = (select: Pg.SelectStmt): AstNode | undefined => {
    const level = wholeRows ? wholeRowLevel(select, analysis, plans) : undefined
    const extra = dependentGroupColumns(select, analysis, plans)
    const system = systemColumnUse(select, analysis, plans)
    if (!level && extra.length === 0 && !system) return undefined
    if (system) for (const [rv, columns] of system.scans) systemColumns.set(rv, columns)
    const out: Record<string, unknown> = {}
    for (const key in select) {
      const field =
        key === 'targetList' && system
          ? system.targetList
          : (select as Record<string, unknown>)[key]
      const scoped = level !== undefined && LEVEL_CLAUSES.has(key)
      if (scoped) {
        level.suspended = OUTPUT_NAME_CLAUSES.has(key)
        levels.push(level)
      }
      out[key] = field !== null && typeof field === 'object' ? mapTree(field, mapper) : field
      if (scoped) levels.pop()
    }
    if (extra.length > 0) out['groupClause'] = [...((out['groupClause'] as []) ?? []), ...extra]
    return { SelectStmt: out } as AstNode
  }

  /** A bare range alias used as a value: its whole row, cast back to the table's row type. */
  const wholeRow = (ref: Pg.ColumnRef): AstNode | undefined => {
    if (levels.length === 0 || ref.fields?.length !== 1) return undefined
    const name = stringsOf(ref.fields)[0]
    const type = name === undefined ? undefined : wholeRowType(name, levels)
    if (!type) return undefined
    // The cast expands the row into its fields, so a row an outer join null-extended would
    // become a row of NULLs; num_nulls tells the two apart (it counts the value itself).
    const value = { ColumnRef: ref } as AstNode
    const nullExtended = binaryOp(
      '<>',
      {
        FuncCall: { funcname: [stringNode('pg_catalog'), stringNode('num_nulls')], args: [value] },
      },
      numberConst(0),
    )
    // The ELSE branch names the output column after the reference, as PostgreSQL names `t`.
    return {
      CaseExpr: {
        args: [{ CaseWhen: { expr: nullExtended, result: nullConst() } }],
        defresult: typeCast(value, [type.schema, type.name]),
      },
    } as AstNode
  }

  const replaceRangeVar = (
    rv: Pg.RangeVar,
    sample: Pg.RangeTableSample | undefined,
  ): AstNode | undefined => {
    const reference = analysis.references.get(rv)
    if (!reference) return undefined
    const alias = rv.alias ?? { aliasname: rv.relname ?? '' }
    switch (reference.kind) {
      case 'cte':
        return renamedCteReference(rv, reference, alias)
      case 'information_schema':
      case 'pg_catalog':
        return virtualCatalogRelation(session, reference, alias, analysis.pushdowns.get(rv))
      case 'view':
        return expandView(ctx, reference, plans.get(reference.entry), alias, sample)
      case 'table': {
        const plan = plans.get(reference.entry)
        if (!plan?.fragments) throw new Error('scan plan missing for a resolved table')
        const system = withForced(systemColumns.get(rv) ?? [], forcedSystem?.get(rv))
        // Without ONLY, a parent's scan reads each descendant's rows under its own policies.
        if (plan.inheritance && rv.inh === true) {
          const candidates = analysis.pushdowns.get(rv)
          const body = inheritedScan(plan, plan.inheritance, sample, candidates, system)
          return rangeSubselect(body, alias)
        }
        const pushed = leakproofConjuncts(plan, analysis.pushdowns.get(rv))
        return rangeSubselect(innerScan(plan, plan.fragments, rv, sample, pushed, system), alias)
      }
    }
  }

  /** `schema.table.column` → `table.column`: the derived table is named by the table alone. */
  const shortenQualifiedColumn = (ref: Pg.ColumnRef): AstNode | undefined => {
    const fields = ref.fields ?? []
    if (fields.length < 3) return undefined
    const names = stringsOf(fields)
    const leading = fields.length === 4 ? names.slice(0, 2) : names.slice(0, 1)
    const isSchema =
      leading.length === 1
        ? session.schemas.has(leading[0] as string)
        : leading[0] === session.datasource.name && session.schemas.has(leading[1] as string)
    if (!isSchema) return undefined
    return { ColumnRef: { ...ref, fields: fields.slice(leading.length) } } as AstNode
  }

  return mapTree(query, mapper)
}

function withForced(system: readonly string[], forced: readonly string[] | undefined) {
  if (!forced) return system
  return [...new Set([...system, ...forced])]
}

/**
 * Clauses of a SELECT that see its FROM items: the FROM list too, for LATERAL items and join
 * conditions. WITH is mapped outside (a CTE never sees the query that uses it).
 */
const LEVEL_CLAUSES = new Set([
  'fromClause',
  'targetList',
  'whereClause',
  'havingClause',
  'windowClause',
  'sortClause',
  'groupClause',
  'distinctClause',
])

/** Clauses where a bare name may be an output column, so it is never read as a whole row. */
const OUTPUT_NAME_CLAUSES = new Set(['sortClause', 'groupClause', 'distinctClause'])
