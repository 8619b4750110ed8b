import { type AstNode, type NodeBody, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { dispatchTag, nodeBody, type TagTable, taggedBody } from '../ast/tag-dispatch.js'
import {
  PalisadeError,
  ReadOnlyViolationError,
  UndefinedFunctionError,
  UndefinedTableError,
  UnsupportedStatementError,
} from '../errors.js'
import {
  isAllowedFunction,
  isAllowedOperator,
  REG_TYPES,
  refusedFunctionReason,
} from '../policy/function-allowlist.js'
import { AGGREGATE_FUNCTIONS } from '../policy/function-kinds.js'
import { isAllowedType } from '../policy/type-allowlist.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { SqlState } from '../sqlstate.js'
import {
  catalogFunctionName,
  GUARDED_CASTS,
  unguardableCall,
} from '../virtual-catalog/catalog-guards.js'
import { isVirtualInformationSchemaView } from '../virtual-catalog/information-schema.js'
import { isVirtualPgCatalogRelation } from '../virtual-catalog/pg-catalog.js'
import { functionSignature } from './function-signature.js'
import { ImpliedObjectNames } from './implied-object-names.js'
import { findPushdownCandidates, type PushdownCandidate } from './leakproof-conjuncts.js'
import { objectName, undefinedType } from './object-names.js'
import type { QueryFacts } from './query-facts.js'
import type { TableReference } from './table-reference.js'

/** What the analyzer learned about one query: every table reference, by node identity. */
export interface QueryAnalysis {
  readonly references: ReadonlyMap<object, TableReference>
  /** CTE definitions renamed because the deparser cannot quote their names (by node identity). */
  readonly cteRenames: ReadonlyMap<object, string>
  /**
   * Object-name casts of a name literal (by TypeCast identity) and the upstream name their
   * literal becomes. Every other cast to an object-identifier type is guarded by the rewrite.
   */
  readonly objectNames: ReadonlyMap<object, string>
  /**
   * Expressions that take an object-identifier type from their siblings (`coalesce(x::regclass,
   * 16384)`), by node identity, with that type: the rewrite guards them like a cast.
   */
  readonly objectGuards: ReadonlyMap<object, string>
  /** Leakproof user conjuncts per scan, copied inside fenced scans (docs/rewrite.md#what-the-derived-table-guarantees). */
  readonly pushdowns: ReadonlyMap<object, readonly PushdownCandidate[]>
  readonly facts: QueryFacts
}

/** Names the deparser prints unquoted: safe only when they need no quoting. */
const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_$]*$/

/**
 * A read-only walk over one query (a SELECT tree) that resolves every table reference with
 * CTE scoping, enforces the function/operator allowlist, refuses constructs that write or that
 * the deparser would alter, and collects the query facts. It throws on the first violation.
 */
export class QueryAnalyzer {
  readonly #session: CompiledSession
  readonly #references = new Map<object, TableReference>()
  readonly #cteRenames = new Map<object, string>()
  readonly #pushdowns = new Map<object, readonly PushdownCandidate[]>()
  readonly #constants = new Map<object, string>()
  readonly #objectGuards = new Map<object, string>()
  readonly #implied = new ImpliedObjectNames()
  readonly #tables = new Map<string, QueryFacts['tables'][number]>()
  readonly #columns = new Set<string>()
  #joins = 0
  #aggregation = false
  #subquery = false
  #where = false
  /** While a view's definition is visited: the name the user wrote for the view. */
  #viewWritten: string | undefined

  constructor(session: CompiledSession) {
    this.#session = session
  }

  analyze(query: AstNode, statementType: string): QueryAnalysis {
    this.#visit(query, new Map())
    for (const { member, type } of this.#implied.resolve()) this.#checkImpliedCast(member, type)
    return {
      references: this.#references,
      cteRenames: this.#cteRenames,
      pushdowns: this.#pushdowns,
      objectNames: this.#constants,
      objectGuards: this.#objectGuards,
      facts: {
        tables: [...this.#tables.values()],
        columns: [...this.#columns],
        join_count: this.#joins,
        has_aggregation: this.#aggregation,
        has_subquery: this.#subquery,
        has_where: this.#where,
        statement_type: statementType,
      },
    }
  }

  /** `scope` maps CTE names visible here to their (possibly renamed) emitted names. */
  #visit(value: unknown, scope: ReadonlyMap<string, string | undefined>): void {
    if (value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const item of value) this.#visit(item, scope)
      return
    }
    const tag = tagOf(value)
    const body = (tag === undefined ? value : (value as Record<string, unknown>)[tag]) as NodeBody
    // No depth limit: a statement nested deeper than the stack allows overflows it, and
    // rewrite() answers that as PostgreSQL does (54001 stack depth limit exceeded).
    if (tag !== undefined) this.#implied.collect(tag, body)
    if (tag === undefined || !this.#visitNode(tag, body, scope)) {
      for (const key in body) {
        const field = body[key]
        if (field !== null && typeof field === 'object') this.#visit(field, scope)
      }
    }
  }

  /** Handles one node; returns true when its fields were already visited. */
  #visitNode(tag: string, body: NodeBody, scope: ReadonlyMap<string, string | undefined>): boolean {
    return dispatchTag(this.#nodeChecks, tag, body, scope) ?? false
  }

  /** What each kind of node is checked for; true when its fields were visited here. */
  readonly #nodeChecks: TagTable<boolean, [ReadonlyMap<string, string | undefined>]> = {
    SelectStmt: (select, scope) => {
      this.#visitSelect(select, scope)
      return true
    },
    RangeVar: (rv, scope) => {
      this.#visitRangeVar(rv, scope)
      return true
    },
    FuncCall: (call) => {
      this.#checkFunction(call)
      return false
    },
    A_Expr: (expr) => {
      this.#checkOperator(expr)
      return false
    },
    TypeCast: (cast) => {
      this.#checkCast(cast)
      return false
    },
    // Column definition lists of functions in FROM: `AS r(a int)`.
    ColumnDef: (def) => {
      const names = stringsOf(def.typeName?.names)
      if (!isAllowedType(names)) throw undefinedType(names)
      return false
    },
    ColumnRef: (ref) => {
      for (const name of stringsOf(ref.fields).slice(-1)) {
        if (name !== '*') this.#columns.add(name)
      }
      return true
    },
    A_Const: () => true,
    ParamRef: () => true,
    String: () => true,
    SubLink: () => this.#sawSubquery(),
    RangeSubselect: () => this.#sawSubquery(),
    JoinExpr: () => {
      this.#joins++
      return false
    },
    IntoClause: () => {
      throw new ReadOnlyViolationError()
    },
    LockingClause: () => {
      throw new ReadOnlyViolationError()
    },
    RangeTableFunc: () => {
      throw new UnsupportedStatementError('XMLTABLE')
    },
    JsonTable: () => {
      throw new UnsupportedStatementError('JSON_TABLE')
    },
    GroupingSet: () => {
      this.#aggregation = true
      return false
    },
  }

  #sawSubquery(): boolean {
    this.#subquery = true
    return false
  }

  #visitSelect(select: Pg.SelectStmt, outer: ReadonlyMap<string, string | undefined>): void {
    if (select.intoClause || (select.lockingClause?.length ?? 0) > 0)
      throw new ReadOnlyViolationError()
    if (select.groupDistinct) throw new UnsupportedStatementError('GROUP BY DISTINCT')
    if (select.whereClause) this.#where = true
    for (const [scan, candidates] of findPushdownCandidates(select))
      this.#pushdowns.set(scan, candidates)
    if ((select.groupClause?.length ?? 0) > 0 || select.havingClause) this.#aggregation = true
    if ((select.fromClause?.length ?? 0) > 1) this.#joins += (select.fromClause?.length ?? 1) - 1
    let scope = outer
    const withClause = select.withClause
    if (withClause) {
      const ctes = (withClause.ctes ?? []).map((c) => taggedBody(c, 'CommonTableExpr'))
      const names = ctes.map((cte) => {
        const name = cte.ctename ?? ''
        // Names Palisade's own CTEs use are never a user's (virtual-catalog/pg-catalog.ts).
        const rename =
          PLAIN_IDENTIFIER.test(name) && !name.startsWith('palisade_')
            ? undefined
            : `palisade_cte_${this.#cteRenames.size + 1}`
        if (rename) this.#cteRenames.set(cte, rename)
        return [name, rename] as const
      })
      const all = new Map([...outer, ...names])
      ctes.forEach((cte, i) => {
        if (tagOf(cte.ctequery) !== 'SelectStmt') throw new ReadOnlyViolationError()
        const aliases = stringsOf(cte.aliascolnames)
        if (aliases.length > 0) this.#implied.collectAliases(cte.ctequery, aliases)
        const cteScope = withClause.recursive ? all : new Map([...outer, ...names.slice(0, i)])
        this.#visit(cte.ctequery, cteScope)
      })
      scope = all
    }
    for (const key in select) {
      if (key === 'withClause') continue
      const field = (select as NodeBody)[key]
      if (field === null || typeof field !== 'object') continue
      // Set-operation branches are bare SelectStmt bodies (no tag): a branch's own WITH
      // (`… UNION (WITH i AS (…) SELECT … FROM i)`) must scope its CTEs like any SELECT.
      if (key === 'larg' || key === 'rarg') this.#visitSelect(field as Pg.SelectStmt, scope)
      else this.#visit(field, scope)
    }
  }

  #visitRangeVar(rv: Pg.RangeVar, scope: ReadonlyMap<string, string | undefined>): void {
    const name = rv.relname ?? ''
    if (!rv.schemaname && !rv.catalogname && scope.has(name)) {
      this.#references.set(rv, { kind: 'cte', name, rename: scope.get(name) })
      return
    }
    const written = [rv.catalogname, rv.schemaname, name].filter((p) => p !== undefined).join('.')
    if (rv.catalogname !== undefined && rv.catalogname !== this.#session.datasource.name) {
      throw new PalisadeError(
        SqlState.FeatureNotSupported,
        `cross-database references are not implemented: "${written}"`,
      )
    }
    const session = this.#session
    if (rv.schemaname === 'information_schema' && !session.schemas.has('information_schema')) {
      if (!isVirtualInformationSchemaView(name)) throw new UndefinedTableError(written)
      this.#references.set(rv, { kind: 'information_schema', view: name })
      return
    }
    // pg_catalog comes first in every search path, so bare catalog names mean the catalog.
    if (rv.schemaname === 'pg_catalog' || (!rv.schemaname && isVirtualPgCatalogRelation(name))) {
      if (!isVirtualPgCatalogRelation(name)) throw new UndefinedTableError(written)
      this.#references.set(rv, { kind: 'pg_catalog', relation: name })
      return
    }
    const entry = session.findTable(rv.schemaname, name)
    if (!entry) throw new UndefinedTableError(rv.schemaname ? `${rv.schemaname}.${name}` : name)
    // Inside a view's definition, errors name the view the user wrote, never what it reads.
    const shown = this.#viewWritten ?? (rv.schemaname ? `${rv.schemaname}.${name}` : name)
    const key = `${entry.exposed.visibleSchema}.${entry.exposed.name}`
    this.#tables.set(key, {
      datasource: session.datasource.name,
      schema: entry.exposed.visibleSchema,
      table: entry.exposed.name,
    })
    const view = session.viewOf(entry)
    if (view?.kind !== 'expand') {
      this.#references.set(rv, { kind: 'table', entry, written: shown })
      return
    }
    this.#references.set(rv, { kind: 'view', entry, body: view.body, written: shown })
    const outerWritten = this.#viewWritten
    this.#viewWritten = shown
    // A view's definition sees no CTE of the query that reads it.
    this.#visit(view.body, new Map())
    this.#viewWritten = outerWritten
  }

  #checkFunction(call: Pg.FuncCall): void {
    const names = stringsOf(call.funcname)
    const catalogFunction = catalogFunctionName(names)
    if (catalogFunction !== undefined) {
      const reason = unguardableCall(catalogFunction, call)
      if (reason !== undefined) throw new UnsupportedStatementError(reason)
      return
    }
    if (!isAllowedFunction(names)) {
      if (isFunctionStyleCast(call, names)) return
      const reason = refusedFunctionReason(names)
      if (reason === undefined) throw new UndefinedFunctionError(functionSignature(call))
      throw new PalisadeError(
        SqlState.InsufficientPrivilege,
        `function ${names[names.length - 1]} is not allowed through Palisade`,
        { detail: `It ${reason}.` },
      )
    }
    const name = names[names.length - 1] as string
    if ((AGGREGATE_FUNCTIONS.has(name) && !call.over) || call.agg_star) this.#aggregation = true
  }

  /**
   * Casts to object identifier types look names up in the upstream catalog, so a name literal
   * is checked against the session's visible catalog instead: a visible table's name is
   * rewritten to its upstream name, a hidden or missing one is `42P01` like any missing
   * relation. Any other value (an OID, a column) is guarded by the rewrite, which lets through
   * only OIDs of the virtual catalog (virtual-catalog/catalog-guards.ts).
   */
  #checkObjectNameCast(cast: Pg.TypeCast, type: string): void {
    const text = nodeBody(cast.arg, 'A_Const')?.sval?.sval
    if (text === undefined || /^\s*\d+\s*$/.test(text)) {
      if (!Object.hasOwn(GUARDED_CASTS, type)) {
        throw new UnsupportedStatementError(`casts to ${type} of anything but a name`)
      }
      return
    }
    this.#constants.set(cast, objectName(this.#session, text, type))
  }

  /**
   * A value that takes an object-identifier type from its siblings: a string literal is a name
   * and gets the same check and upstream name as in an explicit cast; anything else (a number,
   * a parameter, an expression) is guarded like a cast of an OID.
   */
  #checkImpliedCast(member: unknown, type: string): void {
    const tag = tagOf(member)
    if (tag === undefined) return
    const body = (member as Record<string, NodeBody>)[tag] as NodeBody
    const constant = tag === 'A_Const' ? (body as Pg.A_Const) : undefined
    if (constant?.isnull) return
    const text = constant?.sval?.sval
    if (constant && text !== undefined && !/^\s*\d+\s*$/.test(text)) {
      this.#constants.set(body, objectName(this.#session, text, type))
      return
    }
    if (!Object.hasOwn(GUARDED_CASTS, type)) {
      throw new UnsupportedStatementError(`values of type ${type} other than names`)
    }
    this.#objectGuards.set(body, type)
  }

  #checkOperator(expr: Pg.A_Expr): void {
    if (expr.kind !== 'AEXPR_OP' && expr.kind !== 'AEXPR_OP_ANY' && expr.kind !== 'AEXPR_OP_ALL')
      return
    const names = stringsOf(expr.name)
    if (!isAllowedOperator(names)) {
      throw new PalisadeError(
        SqlState.UndefinedFunction,
        `operator does not exist: ${names.join('.')}`,
      )
    }
  }

  #checkCast(cast: Pg.TypeCast): void {
    const names = stringsOf(cast.typeName?.names)
    const type = names[names.length - 1] ?? ''
    if (!REG_TYPES.has(type) && !isAllowedType(names)) throw undefinedType(names)
    if (REG_TYPES.has(type)) {
      this.#checkObjectNameCast(cast, type)
      return
    }
    // `bit '101'` takes its length from the literal; printed back it would become bit(1).
    if (type === 'bit' && (cast.typeName?.typmods?.length ?? 0) === 0) {
      throw new UnsupportedStatementError('bit-string typed literals without a length')
    }
  }
}

/**
 * `inet('10.0.0.1')`: a call named after a built-in type with one plain argument, which
 * PostgreSQL reads as a cast when no function has the name. Object-identifier types are left
 * out: their names are checked only in cast syntax.
 */
function isFunctionStyleCast(call: Pg.FuncCall, names: readonly string[]): boolean {
  const type = names[names.length - 1] as string
  return (
    (call.args?.length ?? 0) === 1 &&
    !call.agg_star &&
    !call.agg_distinct &&
    !call.over &&
    !call.agg_filter &&
    (call.agg_order?.length ?? 0) === 0 &&
    !REG_TYPES.has(type) &&
    refusedFunctionReason(names) === undefined &&
    isAllowedType(names)
  )
}
