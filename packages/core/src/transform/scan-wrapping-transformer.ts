import type { QueryAnalysis } from '../analyze/query-analyzer.js'
import { statementFragment } from '../ast/deparse.js'
import { mapFields, mapTree } from '../ast/map-tree.js'
import {
  type AstNode,
  binaryOp,
  type NodeBody,
  nullConst,
  numberConst,
  type Pg,
  rangeSubselect,
  selectStmt,
  stringConst,
  stringNode,
  stringsOf,
  typeCast,
} from '../ast/node.js'
import { PalisadeError } from '../errors.js'
import { REG_TYPES } from '../policy/function-allowlist.js'
import type { CompiledSession, TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'
import { SqlState } from '../sqlstate.js'
import {
  castLabel,
  catalogFunctionName,
  guardCatalogCall,
  guardObjectCast,
} from '../virtual-catalog/catalog-guards.js'
import {
  informationSchemaSubquery,
  type VirtualInformationSchemaView,
} from '../virtual-catalog/information-schema.js'
import { pgCatalogFragment } from '../virtual-catalog/pg-catalog.js'
import { dependentGroupColumns } from './functional-dependency.js'
import { identityLabel } from './identity-labels.js'
import { innerScan, leakproofConjuncts } from './inner-scan.js'
import { systemColumnUse } from './system-columns.js'
import {
  mayReadWholeRows,
  type WholeRowLevel,
  wholeRowLevel,
  wholeRowType,
} from './whole-row-scope.js'

/**
 * Replaces every table scan with its policy-enforcing derived table (keeping the user's alias,
 * or the table name), catalog views with their per-user filtered form, renames CTEs the
 * deparser cannot quote, and substitutes the Palisade identity for `current_user` and friends.
 * Copy on write: the cached parse tree is never modified.
 */
export function wrapScans(
  query: AstNode,
  session: CompiledSession,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): AstNode {
  // The node whose own object-identifier guard is being built (so its inside is mapped as usual).
  let guarding: object | undefined
  const mapper = (node: AstNode, tag: string, body: NodeBody): AstNode | undefined => {
    const impliedType = analysis.objectGuards.get(body)
    if (impliedType !== undefined && guarding !== body) {
      const outer = guarding
      guarding = body
      const value = mapTree(node, mapper)
      guarding = outer
      return guardObjectCast(session, value, impliedType, impliedType)
    }
    switch (tag) {
      case 'RangeVar':
        return replaceRangeVar(body as Pg.RangeVar, undefined)
      case 'RangeTableSample': {
        const sample = body as Pg.RangeTableSample
        const relation = (sample.relation as { RangeVar?: Pg.RangeVar } | undefined)?.RangeVar
        return relation ? replaceRangeVar(relation, sample) : undefined
      }
      case 'CommonTableExpr': {
        const rename = analysis.cteRenames.get(body)
        if (rename === undefined) return undefined
        return { CommonTableExpr: { ...mapFields(body, mapper), ctename: rename } } as AstNode
      }
      case 'SelectStmt':
        return mapSelect(body as Pg.SelectStmt)
      case 'ResTarget':
        return nameIdentityTarget(body as Pg.ResTarget)
      case 'SQLValueFunction':
        return identityValue((body as Pg.SQLValueFunction).op)
      case 'FuncCall':
        return identityCall(body as Pg.FuncCall) ?? catalogCall(body as Pg.FuncCall)
      case 'ColumnRef':
        // Returning the node itself stops the walk: nothing inside a column reference changes.
        return (
          wholeRow(body as Pg.ColumnRef) ?? shortenQualifiedColumn(body as Pg.ColumnRef) ?? node
        )
      case 'A_Const': {
        // A name literal that takes an object-identifier type from its siblings.
        const upstreamName = analysis.objectNames.get(body)
        return upstreamName === undefined ? node : stringConst(upstreamName)
      }
      case 'ParamRef':
        return node
      case 'TypeCast': {
        const cast = body as Pg.TypeCast
        const upstreamName = analysis.objectNames.get(body)
        if (upstreamName !== undefined) {
          return { TypeCast: { ...cast, arg: stringConst(upstreamName) } } as AstNode
        }
        const names = stringsOf(cast.typeName?.names)
        const type = names[names.length - 1] ?? ''
        if (!REG_TYPES.has(type)) return undefined
        const value = mapTree(cast.arg as AstNode, mapper)
        return guardObjectCast(session, value, type, castLabel(cast, type))
      }
      default:
        return undefined
    }
  }

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
        if (reference.rename === undefined) return undefined
        return { RangeVar: { ...rv, relname: reference.rename, alias } }
      case 'information_schema':
        return rangeSubselect(catalogView(session, reference.view), alias)
      case 'pg_catalog':
        return rangeSubselect(pgCatalogFragment(session, reference.relation), alias)
      case 'table': {
        const plan = plans.get(reference.entry)
        if (!plan?.fragments) throw new Error('scan plan missing for a resolved table')
        const pushed = leakproofConjuncts(plan, analysis.pushdowns.get(rv))
        const system = systemColumns.get(rv) ?? []
        return rangeSubselect(innerScan(plan, plan.fragments, rv, sample, pushed, system), alias)
      }
      case 'view': {
        if (sample) {
          throw new PalisadeError(
            SqlState.FeatureNotSupported,
            'TABLESAMPLE clause can only be applied to tables and materialized views',
          )
        }
        const plan = plans.get(reference.entry)
        const view = reference.entry.view
        if (!plan?.fragments || view?.kind !== 'expand') {
          throw new Error('scan plan missing for an expanded view')
        }
        const body = mapTree(reference.body, mapper)
        const named = view.columnNames?.map(stringNode)
        if (!view.wrap) {
          // The user's column aliases first, the view's own names for the rest.
          const given = alias.colnames ?? []
          const colnames = named ? [...given, ...named.slice(given.length)] : alias.colnames
          return rangeSubselect(body, colnames ? { ...alias, colnames } : alias)
        }
        // The view's own policies apply on top of its definition, as on a table's scan.
        const inner = selectStmt({
          targets: [plan.fragments.targets],
          from: [
            rangeSubselect(
              body,
              named
                ? { aliasname: plan.table.name, colnames: named }
                : { aliasname: plan.table.name },
            ),
          ],
          where: plan.fragments.where,
          fence: plan.filtered,
        })
        return rangeSubselect(inner, alias)
      }
    }
  }

  const nameIdentityTarget = (target: Pg.ResTarget): AstNode | undefined => {
    if (target.name !== undefined) return undefined
    const label = identityLabel(target.val as AstNode | undefined)
    if (label === undefined) return undefined
    // Written out rather than spread: this runs for every identity function in a select list.
    const renamed: Pg.ResTarget = { name: label, val: mapTree(target.val, mapper) as Pg.Node }
    if (target.indirection !== undefined) renamed.indirection = target.indirection
    if (target.location !== undefined) renamed.location = target.location
    return { ResTarget: renamed } as AstNode
  }

  const identityValue = (op: Pg.SQLValueFunction['op']): AstNode | undefined => {
    switch (op) {
      case 'SVFOP_CURRENT_USER':
      case 'SVFOP_SESSION_USER':
      case 'SVFOP_USER':
      case 'SVFOP_CURRENT_ROLE':
        return session.identity.user
      case 'SVFOP_CURRENT_CATALOG':
        return session.identity.catalog
      case 'SVFOP_CURRENT_SCHEMA':
        return session.identity.schema
      default:
        return undefined
    }
  }

  const catalogCall = (call: Pg.FuncCall): AstNode | undefined => {
    const name = catalogFunctionName(stringsOf(call.funcname))
    if (name === undefined) return undefined
    const args = (call.args ?? []).map((arg) => mapTree(arg as AstNode, mapper))
    return guardCatalogCall(session, name, args)
  }

  const identityCall = (call: Pg.FuncCall): AstNode | undefined => {
    const names = stringsOf(call.funcname)
    const name = names[names.length - 1]
    if ((call.args?.length ?? 0) > 0) return undefined
    if (name === 'current_database') return session.identity.catalog
    if (name === 'current_schema') return session.identity.schema
    if (name === 'current_user' || name === 'session_user') {
      return session.identity.user
    }
    return undefined
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

/** The session's filtered form of a catalog view, deparsed once per session. */
function catalogView(session: CompiledSession, view: VirtualInformationSchemaView): AstNode {
  let fragment = session.catalogViews.get(view)
  if (!fragment) {
    fragment = statementFragment(informationSchemaSubquery(session, view))
    session.catalogViews.set(view, fragment)
  }
  return fragment
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
