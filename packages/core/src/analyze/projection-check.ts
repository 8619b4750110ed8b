import { mapFields, mapTree, type NodeMapper } from '../ast/map-tree.js'
import { type AstNode, bodyOf, type NodeBody, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { targetsMatchLineage } from '../policy/target-pattern.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'
import {
  projectionError,
  renamed,
  resolveColumn,
  type ScopeColumn,
  type ScopeLevel,
  type ScopeRelation,
  type Taint,
  wholeRowTaint,
} from './projection-scope.js'
import { expandStar, mergedStar, outputName } from './projection-star.js'
import type { QueryAnalysis } from './query-analyzer.js'

/**
 * Projection policies (docs/policies.md#projection-exact-rules): a constrained column may
 * filter, join, group and order, but no output column may be computed from it. The check
 * follows each column's taint through the statement's blocks: a derived table's or CTE's
 * output computed from a constrained column is constrained in the block that reads it, a
 * sublink in an output expression passes on what it outputs and any constrained column of an
 * enclosing block it reads, and filter positions (WHERE, ON, GROUP BY, HAVING, ORDER BY,
 * windows, an aggregate's FILTER and ORDER BY) pass on nothing. Resolution is conservative:
 * where a name could mean several columns, the taint of each counts. A `*` that would include
 * a constrained column is written out without it; where that cannot be done exactly, the
 * statement is refused. Returns the query with those stars written out, or throws 42501.
 */
export function enforceProjection(
  query: AstNode,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): AstNode {
  let any: Taint | undefined
  for (const plan of plans.values()) {
    const column = plan.projected.values().next().value
    if (column !== undefined) any ??= { column, table: plan.table.name }
  }
  const select = bodyOf<Pg.SelectStmt>(query, 'SelectStmt')
  if (!any || !select) return query
  const check = new ProjectionCheck(analysis, plans, any)
  const result = check.block(select, { levels: [], ctes: new Map() })
  const leak = result.columns.find((c) => c.taint)?.taint ?? result.opaqueTaint
  if (leak) throw projectionError(leak)
  return check.expanded(query)
}

/** The outputs of one block: its columns, and when they are not all known, their taint. */
interface BlockResult {
  readonly columns: readonly ScopeColumn[]
  /** Set when the columns are not all known; the taint any unknown one may carry. */
  readonly opaqueTaint: Taint | undefined
  readonly exact: boolean
  /** A constrained column of an enclosing block that this block reads anywhere. */
  readonly outerTaint: Taint | undefined
}

interface Scope {
  readonly levels: readonly ScopeLevel[]
  readonly ctes: ReadonlyMap<string, ScopeRelation>
}

interface Frame {
  readonly depth: number
  outerTaint: Taint | undefined
}

/** Clauses that filter, group or order rows: what they read reaches no output column. */
const FILTER_CLAUSES = [
  'whereClause',
  'groupClause',
  'havingClause',
  'windowClause',
  'sortClause',
  'distinctClause',
  'limitCount',
  'limitOffset',
] as const

class ProjectionCheck {
  readonly #analysis: QueryAnalysis
  readonly #plans: ReadonlyMap<TableEntry, ScanPlan>
  /** A constrained column to name where a construct is not understood. */
  readonly #any: Taint
  /** The blocks being analyzed, outermost first, for correlated references. */
  #frames: Frame[] = []
  /** Whether stars are written out: not inside a view's definition, which this does not rewrite. */
  #expand = true
  /** Select lists with their stars written out, by the SelectStmt body they belong to. */
  readonly #expansions = new Map<object, AstNode[]>()

  constructor(analysis: QueryAnalysis, plans: ReadonlyMap<TableEntry, ScanPlan>, any: Taint) {
    this.#analysis = analysis
    this.#plans = plans
    this.#any = any
  }

  block(select: Pg.SelectStmt, outer: Scope): BlockResult {
    const frame: Frame = { depth: outer.levels.length, outerTaint: undefined }
    this.#frames.push(frame)
    try {
      const ctes = select.withClause ? this.#with(select.withClause, outer) : outer.ctes
      const scope: Scope = { levels: outer.levels, ctes }
      const result = this.#body(select, scope)
      return { ...result, outerTaint: frame.outerTaint }
    } finally {
      this.#frames.pop()
    }
  }

  #body(select: Pg.SelectStmt, scope: Scope): Omit<BlockResult, 'outerTaint'> {
    if (select.op !== undefined && select.op !== 'SETOP_NONE') {
      const left = this.block(select.larg as Pg.SelectStmt, scope)
      const right = this.block(select.rarg as Pg.SelectStmt, scope)
      this.#value(
        [select.sortClause, select.limitCount, select.limitOffset],
        scope,
        /* flows */ false,
      )
      return unionOutputs(left, right)
    }
    if (select.valuesLists) return this.#values(select.valuesLists, scope)
    const level: ScopeLevel = { relations: [], stars: [] }
    const inner: Scope = { levels: [...scope.levels, level], ctes: scope.ctes }
    for (const item of select.fromClause ?? []) this.#fromItem(item, level, inner, scope)
    for (const key of FILTER_CLAUSES) this.#value(select[key], inner, false)
    const columns: ScopeColumn[] = []
    let exact = true
    let opaqueTaint: Taint | undefined
    const targets = (select.targetList ?? []) as AstNode[]
    let rewritten: AstNode[] | undefined
    let dropped: Taint | undefined
    targets.forEach((item, i) => {
      const target = bodyOf<Pg.ResTarget>(item, 'ResTarget')
      const names = stringsOf(bodyOf<Pg.ColumnRef>(target?.val, 'ColumnRef')?.fields)
      if (names[names.length - 1] === '*') {
        const star = expandStar(
          names,
          inner.levels,
          (taint, at) => this.#hit(taint, at),
          this.#expand,
        )
        columns.push(...star.columns)
        if (!star.exact) {
          exact = false
          opaqueTaint ??= star.opaqueTaint
        }
        if (star.replacement) {
          rewritten ??= targets.slice(0, i)
          rewritten.push(...star.replacement)
          dropped ??= star.dropped
          return
        }
        rewritten?.push(item)
        return
      }
      const taint = this.#value(target?.val, inner, true)
      columns.push({ name: target ? outputName(target) : undefined, taint })
      rewritten?.push(item)
    })
    if (rewritten) {
      // Every column the `*` stood for is constrained: like a select list of denied columns.
      if (rewritten.length === 0) throw projectionError(dropped ?? this.#any)
      this.#expansions.set(select, rewritten)
    }
    return { columns, exact, opaqueTaint }
  }

  #values(lists: readonly AstNode[], scope: Scope): Omit<BlockResult, 'outerTaint'> {
    const taints: (Taint | undefined)[] = []
    for (const list of lists) {
      const items = bodyOf<Pg.List>(list, 'List')?.items ?? []
      items.forEach((item, i) => {
        // Every row is walked: its references may be correlated ones the blocks around need.
        const taint = this.#value(item, scope, true)
        taints[i] ??= taint
      })
    }
    const columns = taints.map((taint, i) => ({ name: `column${i + 1}`, taint }))
    return { columns, exact: true, opaqueTaint: undefined }
  }

  /** The CTEs of a WITH, each with the columns its query outputs; a recursive one until its taint settles. */
  #with(clause: Pg.WithClause, outer: Scope): Map<string, ScopeRelation> {
    const ctes = new Map(outer.ctes)
    for (const node of clause.ctes ?? []) {
      const cte = bodyOf<Pg.CommonTableExpr>(node, 'CommonTableExpr')
      const query = bodyOf<Pg.SelectStmt>(cte?.ctequery, 'SelectStmt')
      if (!cte || !query) throw projectionError(this.#any)
      const name = cte.ctename ?? ''
      const aliases = stringsOf(cte.aliascolnames)
      const scope = { levels: outer.levels, ctes }
      const recursive = clause.recursive && query.op !== undefined && query.op !== 'SETOP_NONE'
      let relation: ScopeRelation
      if (recursive) {
        relation = relationOf(this.block(query.larg as Pg.SelectStmt, scope), name, aliases)
        // Taint only grows, one column at a time at most per round.
        for (let round = 0; ; round++) {
          ctes.set(name, relation)
          const next = relationOf(this.block(query, scope), name, aliases)
          if (sameTaint(next, relation)) break
          relation = next
          if (round > (next.columns?.length ?? 0) + 1) throw projectionError(this.#any)
        }
      } else {
        relation = relationOf(this.block(query, scope), name, aliases)
      }
      ctes.set(name, withSearchColumns(relation, cte))
    }
    return ctes
  }

  #fromItem(item: AstNode, level: ScopeLevel, scope: Scope, outer: Scope): void {
    const tag = tagOf(item)
    const add = (relation: ScopeRelation): void => {
      level.relations.push(relation)
      level.stars.push(relation)
    }
    if (tag === 'RangeVar' || tag === 'RangeTableSample') {
      const sample = bodyOf<Pg.RangeTableSample>(item, 'RangeTableSample')
      if (sample) this.#value([sample.args, sample.repeatable], scope, false)
      const rv = bodyOf<Pg.RangeVar>(sample ? sample.relation : item, 'RangeVar')
      if (!rv) throw projectionError(this.#any)
      add(this.#relation(rv, scope))
      return
    }
    if (tag === 'RangeSubselect') {
      const sub = bodyOf<Pg.RangeSubselect>(item, 'RangeSubselect') as Pg.RangeSubselect
      const query = bodyOf<Pg.SelectStmt>(sub.subquery, 'SelectStmt')
      if (!query) throw projectionError(this.#any)
      const result = this.block(query, sub.lateral ? scope : outer)
      add(relationOf(result, sub.alias?.aliasname, stringsOf(sub.alias?.colnames)))
      return
    }
    if (tag === 'RangeFunction') {
      // Functions in FROM see the items before them; every column they return is computed
      // from their arguments.
      const fn = bodyOf<Pg.RangeFunction>(item, 'RangeFunction') as Pg.RangeFunction
      const taint = this.#value(fn.functions, scope, true)
      const first = bodyOf<Pg.List>(fn.functions?.[0], 'List')?.items?.[0]
      const called = stringsOf(bodyOf<Pg.FuncCall>(first, 'FuncCall')?.funcname)
      const name = fn.alias?.aliasname ?? (fn.is_rowsfrom ? undefined : called[called.length - 1])
      add({ name, columns: undefined, opaqueTaint: taint })
      return
    }
    if (tag === 'JoinExpr') {
      this.#join(bodyOf<Pg.JoinExpr>(item, 'JoinExpr') as Pg.JoinExpr, level, scope, outer)
      return
    }
    throw projectionError(this.#any)
  }

  #join(join: Pg.JoinExpr, level: ScopeLevel, scope: Scope, outer: Scope): void {
    const start = level.stars.length
    this.#fromItem(join.larg as AstNode, level, scope, outer)
    const middle = level.stars.length
    this.#fromItem(join.rarg as AstNode, level, scope, outer)
    this.#value(join.quals, scope, false)
    const left = level.stars.slice(start, middle)
    const right = level.stars.slice(middle)
    const members = [...left, ...right]
    const using = stringsOf(join.usingClause)
    const merged = join.isNatural || using.length > 0
    if (merged) {
      const mergedNames = natural(join, left, right)
      // A merged column takes either side's value: both sides' taint.
      const taintOf = (name: string): Taint | undefined => {
        for (const r of members) {
          const t = r.columns
            ? r.columns.find((c) => (c.name === name || c.name === undefined) && c.taint)?.taint
            : r.opaqueTaint
          if (t) return t
        }
        return undefined
      }
      const columns = mergedNames?.map((name) => ({ name, taint: taintOf(name) }))
      const relation: ScopeRelation = {
        name: undefined,
        columns,
        opaqueTaint: columns ? undefined : members.map(wholeRowTaint).find((t) => t),
      }
      level.relations.push(relation)
      if (join.join_using_alias?.aliasname) {
        level.relations.push({ ...relation, name: join.join_using_alias.aliasname })
      }
    }
    if (!join.alias && !merged) return
    level.stars.splice(start)
    const written = join.alias
      ? undefined
      : mergedStar(join, left, right, natural(join, left, right))
    if (written) {
      level.stars.push(written)
      return
    }
    // A join alias, or merged columns over sides this does not write out: one opaque item.
    const whole: ScopeRelation = {
      name: join.alias?.aliasname,
      columns: undefined,
      opaqueTaint: members.map(wholeRowTaint).find((t) => t),
    }
    if (join.alias) level.relations.push(whole)
    level.stars.push(whole)
  }

  /** A table, view, CTE or catalog relation named in FROM, under its range name. */
  #relation(rv: Pg.RangeVar, scope: Scope): ScopeRelation {
    const name = rv.alias?.aliasname ?? rv.relname
    const aliases = stringsOf(rv.alias?.colnames)
    const reference = this.#analysis.references.get(rv)
    switch (reference?.kind) {
      case 'table': {
        const plan = this.#plans.get(reference.entry)
        if (!plan) throw projectionError(this.#any)
        // `ONLY` reads none of the children whose policies the plan's constraints include.
        const projected = rv.inh === true ? plan.projected : ownProjected(reference.entry, plan)
        const columns = plan.columns.map((column) => ({
          name: column,
          taint: projected.has(column) ? { column, table: plan.table.name } : undefined,
        }))
        return renamed({ name, columns, opaqueTaint: undefined }, aliases)
      }
      case 'view':
        return renamed({ ...this.#view(reference), name }, aliases)
      case 'cte': {
        const cte = scope.ctes.get(reference.name)
        // A CTE this walk did not see (it never should): anything it outputs may be constrained.
        if (!cte) return { name, columns: undefined, opaqueTaint: this.#any }
        return renamed({ ...cte, name }, aliases)
      }
      case 'information_schema':
      case 'pg_catalog':
        return { name, columns: undefined, opaqueTaint: undefined }
      default:
        throw projectionError(this.#any)
    }
  }

  /** A view's columns, each with the taint its definition gives it and the view's own projection policies. */
  #view(reference: { entry: TableEntry; body: AstNode }): ScopeRelation {
    const plan = this.#plans.get(reference.entry)
    const body = bodyOf<Pg.SelectStmt>(reference.body, 'SelectStmt')
    const view = reference.entry.view
    if (!plan || !body || view?.kind !== 'expand') throw projectionError(this.#any)
    // The definition is a query of its own: no enclosing block, no CTE of the user's.
    const frames = this.#frames
    const expand = this.#expand
    this.#frames = []
    this.#expand = false
    const result = this.block(body, { levels: [], ctes: new Map() })
    this.#frames = frames
    this.#expand = expand
    const defined = relationOf(result, undefined, view.columnNames ?? [])
    const own = (column: string): Taint | undefined =>
      plan.projected.has(column) ? { column, table: plan.table.name } : undefined
    if (!defined.columns) {
      return { name: undefined, columns: undefined, opaqueTaint: defined.opaqueTaint ?? own('') }
    }
    if (!view.wrap) {
      const columns = defined.columns.map((c) => ({
        name: c.name,
        taint: c.taint ?? (c.name === undefined ? undefined : own(c.name)),
      }))
      return { name: undefined, columns, opaqueTaint: undefined }
    }
    const byName = new Map(defined.columns.map((c) => [c.name, c.taint]))
    const columns = plan.columns.map((column) => ({
      name: column,
      taint: own(column) ?? byName.get(column) ?? defined.columns?.find((c) => !c.name)?.taint,
    }))
    return { name: undefined, columns, opaqueTaint: undefined }
  }

  /**
   * The taint of an expression's value (`flows`), or of nothing when it sits in a filter
   * position; either way every column reference in it is resolved, so correlated references
   * reach the blocks around them.
   */
  #value(value: unknown, scope: Scope, flows: boolean): Taint | undefined {
    if (value === null || typeof value !== 'object') return undefined
    if (Array.isArray(value)) {
      let taint: Taint | undefined
      for (const item of value) taint = this.#value(item, scope, flows) ?? taint
      return taint
    }
    const tag = tagOf(value)
    const body = (tag === undefined ? value : (value as Record<string, unknown>)[tag]) as NodeBody
    switch (tag) {
      case 'A_Const':
      case 'ParamRef':
        return undefined
      case 'ColumnRef': {
        let taint: Taint | undefined
        resolveColumn(stringsOf((body as Pg.ColumnRef).fields), scope.levels, (t, level) => {
          this.#hit(t, level)
          taint ??= t
        })
        return flows ? taint : undefined
      }
      case 'SubLink':
        return this.#sublink(body as Pg.SubLink, scope, flows)
      case 'SelectStmt': {
        const result = this.block(body as Pg.SelectStmt, scope)
        return flows ? (blockTaint(result) ?? result.outerTaint) : undefined
      }
      case 'FuncCall': {
        const call = body as Pg.FuncCall
        // FILTER, the window and an aggregate's ORDER BY choose and order rows; WITHIN GROUP's
        // ORDER BY is what the aggregate returns (percentile_disc, mode).
        this.#value([call.agg_filter, call.over], scope, false)
        const ordered = this.#value(call.agg_order, scope, flows && call.agg_within_group === true)
        return this.#value(call.args, scope, flows) ?? ordered
      }
      default: {
        let taint: Taint | undefined
        for (const key in body) {
          const field = body[key]
          if (field !== null && typeof field === 'object')
            taint = this.#value(field, scope, flows) ?? taint
        }
        return taint
      }
    }
  }

  /**
   * A sublink in an output expression outputs what its query outputs (EXISTS outputs only
   * whether a row exists) and anything of the enclosing blocks it reads; as a predicate it
   * outputs nothing.
   */
  #sublink(link: Pg.SubLink, scope: Scope, flows: boolean): Taint | undefined {
    const test = this.#value(link.testexpr, scope, flows)
    const query = bodyOf<Pg.SelectStmt>(link.subselect, 'SelectStmt')
    if (!query) return flows ? (test ?? this.#any) : undefined
    const result = this.block(query, scope)
    if (!flows) return undefined
    const outputs = link.subLinkType === 'EXISTS_SUBLINK' ? undefined : blockTaint(result)
    return test ?? outputs ?? result.outerTaint
  }

  /** A resolved reference: a constrained column of level `level` taints every block inside it. */
  #hit(taint: Taint | undefined, level: number): void {
    if (!taint) return
    for (const frame of this.#frames) if (frame.depth > level) frame.outerTaint ??= taint
  }

  /** The query with every recorded select list in place of its SelectStmt's own. */
  expanded(query: AstNode): AstNode {
    if (this.#expansions.size === 0) return query
    const expansions = this.#expansions
    const mapSelect = (select: NodeBody): NodeBody => {
      let out: NodeBody | undefined
      for (const key in select) {
        const field = select[key]
        if (field === null || typeof field !== 'object') continue
        // Set-operation branches are bare SelectStmt bodies.
        const mapped =
          key === 'larg' || key === 'rarg'
            ? mapSelect(field as NodeBody)
            : mapTree(key === 'targetList' ? (expansions.get(select) ?? field) : field, mapper)
        if (mapped !== field) {
          out ??= { ...select }
          out[key] = mapped
        }
      }
      return out ?? select
    }
    const renames = this.#analysis.cteRenames as Map<object, string>
    const mapper: NodeMapper = (node, tag, body) => {
      if (tag === 'CommonTableExpr') {
        // A CTE to be renamed is known by its definition's identity (cte-renaming.ts).
        const out = mapFields(body, mapper)
        const rename = renames.get(body)
        if (out !== body && rename !== undefined) renames.set(out, rename)
        return out === body ? node : ({ CommonTableExpr: out } as AstNode)
      }
      if (tag !== 'SelectStmt') return undefined
      const out = mapSelect(body)
      return out === body ? node : ({ SelectStmt: out } as AstNode)
    }
    return mapTree(query, mapper)
  }
}

/**
 * A parent's constrained columns without its children's: those a projection policy of its own
 * lineage constrains, unless that policy is known not to fire for this session.
 */
function ownProjected(entry: TableEntry, plan: ScanPlan): ReadonlySet<string> {
  if (!entry.descendants?.length) return plan.projected
  const table = plan.table
  const lineage = [{ schema: table.schema, table: table.name }, ...(table.table.ancestors ?? [])]
  const own = entry.policies.projections.filter((p) => p.state !== 'skipped')
  return new Set(
    [...plan.projected].filter((column) =>
      own.some((p) => targetsMatchLineage(p.policy.targets, lineage, column)),
    ),
  )
}

function blockTaint(result: Omit<BlockResult, 'outerTaint'>): Taint | undefined {
  return result.columns.find((c) => c.taint)?.taint ?? result.opaqueTaint
}

/** A block's outputs as a FROM item: exact columns renamed by an alias list, or opaque. */
function relationOf(
  result: Omit<BlockResult, 'outerTaint'>,
  name: string | undefined,
  aliases: readonly string[],
): ScopeRelation {
  if (!result.exact) return { name, columns: undefined, opaqueTaint: blockTaint(result) }
  return renamed({ name, columns: result.columns, opaqueTaint: undefined }, aliases)
}

/** The outputs of a set operation: each column may come from either branch. */
function unionOutputs(
  left: Omit<BlockResult, 'outerTaint'>,
  right: Omit<BlockResult, 'outerTaint'>,
): Omit<BlockResult, 'outerTaint'> {
  if (!left.exact || !right.exact || left.columns.length !== right.columns.length) {
    return { columns: [], exact: false, opaqueTaint: blockTaint(left) ?? blockTaint(right) }
  }
  const columns = left.columns.map((c, i) => ({
    name: c.name,
    taint: c.taint ?? right.columns[i]?.taint,
  }))
  return { columns, exact: true, opaqueTaint: undefined }
}

function sameTaint(a: ScopeRelation, b: ScopeRelation): boolean {
  if (!a.columns || !b.columns) return !a.columns && !b.columns && !a.opaqueTaint === !b.opaqueTaint
  return (
    a.columns.length === b.columns.length &&
    a.columns.every((c, i) => !c.taint === !b.columns?.[i]?.taint)
  )
}

/** `SEARCH … SET seq` and `CYCLE … SET mark USING path` add columns built from the CTE's rows. */
function withSearchColumns(relation: ScopeRelation, cte: Pg.CommonTableExpr): ScopeRelation {
  const added = [
    cte.search_clause?.search_seq_column,
    cte.cycle_clause?.cycle_mark_column,
    cte.cycle_clause?.cycle_path_column,
  ].filter((name): name is string => name !== undefined)
  if (added.length === 0 || !relation.columns) return relation
  const taint = wholeRowTaint(relation)
  return { ...relation, columns: [...relation.columns, ...added.map((name) => ({ name, taint }))] }
}

/** The columns a USING or NATURAL join merges, or undefined when they are not known here. */
function natural(
  join: Pg.JoinExpr,
  left: readonly ScopeRelation[],
  right: readonly ScopeRelation[],
): string[] | undefined {
  return join.isNatural ? naturalColumns(left, right) : stringsOf(join.usingClause)
}

/** The columns a NATURAL join merges, or undefined when a side's columns are not known. */
function naturalColumns(
  left: readonly ScopeRelation[],
  right: readonly ScopeRelation[],
): string[] | undefined {
  if ([...left, ...right].some((r) => !r.columns || r.columns.some((c) => !c.name)))
    return undefined
  const names = (side: readonly ScopeRelation[]) =>
    new Set(side.flatMap((r) => (r.columns ?? []).map((c) => c.name as string)))
  const right_ = names(right)
  return [...names(left)].filter((name) => right_.has(name))
}
