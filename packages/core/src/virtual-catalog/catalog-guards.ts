import {
  type AstNode,
  and,
  binaryOp,
  builtinEquals,
  columnRef,
  exprSublink,
  nullConst,
  numberConst,
  type Pg,
  rangeSubselect,
  rangeVar,
  resTarget,
  selectStmt,
  stringConst,
  stringNode,
  tagOf,
} from '../ast/node.js'
import { taggedBody } from '../ast/tag-dispatch.js'
import type { CompiledSession } from '../session/compiled-session.js'
import {
  pgCatalogExpression,
  pgCatalogFragment,
  pgCatalogPlainColumns,
  qualifiedCast,
} from './pg-catalog.js'

/**
 * Catalog functions and object-identifier casts, made safe for a user who knows OIDs.
 *
 * Functions like `format_type(oid, typmod)` or `pg_get_constraintdef(oid)` and casts like
 * `x::regclass` read the real catalog: called with the OID of a hidden table they would print
 * its name or definition. Each call is rewritten so the function only ever receives an OID found
 * in the session's virtual catalog (pg-catalog.ts), and returns NULL for any other, exactly as
 * it does for an OID that does not exist:
 *
 *   format_type(K, m)  →  (SELECT pg_catalog.format_type(palisade_arg.k, m)
 *                          FROM (SELECT (K)::pg_catalog.oid AS k) palisade_arg
 *                          WHERE palisade_arg.k IN (SELECT oid FROM <virtual pg_type>))
 *
 * The key is evaluated once, in its own derived table, so a volatile key cannot pass the check
 * with one value and reach the function with another.
 */

interface Guard {
  /** Position of the OID argument. */
  readonly arg: number
  /** The virtual relation and column that hold the OIDs this session may see. */
  readonly relation: string
  readonly column: string
  readonly arity: readonly number[]
}

const guard = (relation: string, column: string, ...arity: number[]): Guard => ({
  arg: 0,
  relation,
  column,
  arity,
})

const GUARDED_FUNCTIONS: Readonly<Record<string, Guard>> = {
  format_type: guard('pg_type', 'oid', 2),
  pg_relation_is_publishable: guard('pg_class', 'oid', 1),
  pg_get_indexdef: guard('pg_index', 'indexrelid', 1, 3),
  pg_get_constraintdef: guard('pg_constraint', 'oid', 1, 2),
  pg_get_function_arguments: guard('pg_proc', 'oid', 1),
  pg_get_function_identity_arguments: guard('pg_proc', 'oid', 1),
  pg_get_function_result: guard('pg_proc', 'oid', 1),
  pg_get_partkeydef: guard('pg_partitioned_table', 'partrelid', 1),
  pg_get_triggerdef: guard('pg_trigger', 'oid', 1, 2),
  pg_get_ruledef: guard('pg_rewrite', 'oid', 1, 2),
  pg_get_statisticsobjdef: guard('pg_statistic_ext', 'oid', 1),
  pg_get_statisticsobjdef_columns: guard('pg_statistic_ext', 'oid', 1),
}

/** Functions rewritten into lookups in the virtual catalog, with their accepted arities. */
const LOOKUP_FUNCTIONS: Readonly<Record<string, readonly number[]>> = {
  pg_get_expr: [2, 3],
  pg_partition_ancestors: [1],
  obj_description: [1, 2],
  col_description: [2],
}

/**
 * `pg_*_is_visible(oid)`, answered from the session's search path (the default schema after
 * pg_catalog): upstream sessions run with an empty search path (so that no upstream object can
 * shadow a built-in), which would call every user object invisible.
 */
const VISIBILITY_FUNCTIONS: Readonly<Record<string, readonly [string, string]>> = {
  pg_table_is_visible: ['pg_class', 'relnamespace'],
  pg_type_is_visible: ['pg_type', 'typnamespace'],
  pg_function_is_visible: ['pg_proc', 'pronamespace'],
}

/** Object-identifier types a non-literal value may be cast to, and where their OIDs live. */
export const GUARDED_CASTS: Readonly<Record<string, readonly [string, string]>> = {
  regclass: ['pg_class', 'oid'],
  regtype: ['pg_type', 'oid'],
  regnamespace: ['pg_namespace', 'oid'],
  regproc: ['pg_proc', 'oid'],
  regprocedure: ['pg_proc', 'oid'],
  regoper: ['pg_operator', 'oid'],
  regoperator: ['pg_operator', 'oid'],
  regcollation: ['pg_collation', 'oid'],
}

/**
 * Functions answered without the upstream: sizes describe data a filter hides (psql's `\dt+`
 * shows no size rather than failing), sequences are not listed, the owner is the Palisade user,
 * the search path is the session's default schema.
 */
const ANSWERED_FUNCTIONS: Readonly<Record<string, readonly number[]>> = {
  pg_table_size: [1],
  pg_relation_size: [1, 2],
  pg_total_relation_size: [1],
  pg_indexes_size: [1],
  pg_database_size: [1],
  // Sequences are not part of the virtual catalog.
  pg_get_serial_sequence: [2],
  pg_get_userbyid: [1],
  current_schemas: [1],
}

/** Catalog functions a query may call (each is rewritten; policy expressions may not). */
export const CATALOG_FUNCTIONS: ReadonlySet<string> = new Set([
  ...Object.keys(GUARDED_FUNCTIONS),
  ...Object.keys(VISIBILITY_FUNCTIONS),
  ...Object.keys(LOOKUP_FUNCTIONS),
  ...Object.keys(ANSWERED_FUNCTIONS),
])

/** The catalog function a call names (bare or `pg_catalog.`-qualified), if it is one. */
export function catalogFunctionName(names: readonly string[]): string | undefined {
  const name = names.length === 1 || names[0] === 'pg_catalog' ? names[names.length - 1] : undefined
  return name !== undefined && names.length <= 2 && CATALOG_FUNCTIONS.has(name) ? name : undefined
}

/** Why a call to a catalog function cannot be guarded, or undefined when it can. */
export function unguardableCall(name: string, call: Pg.FuncCall): string | undefined {
  const args = call.args ?? []
  const arity =
    GUARDED_FUNCTIONS[name]?.arity ??
    (Object.hasOwn(VISIBILITY_FUNCTIONS, name) ? [1] : undefined) ??
    LOOKUP_FUNCTIONS[name] ??
    ANSWERED_FUNCTIONS[name] ??
    []
  if (!arity.includes(args.length)) return `${name} with ${args.length} arguments`
  if (args.some((a) => tagOf(a) === 'NamedArgExpr')) return `named arguments to ${name}`
  if (call.over || call.agg_filter || call.agg_order || call.agg_star || call.agg_distinct) {
    return `${name} as an aggregate or window function`
  }
  if (call.func_variadic) return `VARIADIC arguments to ${name}`
  return undefined
}

const ARG = 'palisade_arg'
const VISIBLE = 'palisade_visible'

/** `(SELECT <target> FROM (SELECT <bound> AS ...) palisade_arg WHERE <where>)`. */
function scalarSubquery(target: AstNode, from: AstNode[], where?: AstNode): AstNode {
  return exprSublink(selectStmt({ targets: [target], from, where }))
}

/** The derived table that evaluates each bound argument once: `(SELECT a AS k, ...) palisade_arg`. */
function boundArguments(bound: readonly (readonly [string, AstNode])[]): AstNode {
  const targets = bound.map(([name, value]) => resTarget(value, name))
  return rangeSubselect(selectStmt({ targets, from: [] }), { aliasname: ARG })
}

/**
 * `<key> IN (SELECT palisade_visible.<column> FROM <virtual relation> palisade_visible)`, with
 * `x.<column> = <key>` inside the fence too (the key is a bound argument, evaluated outside it,
 * and the equality is the built-in, leakproof one of OIDs): one lookup, not the visible set.
 */
function inVirtual(
  session: CompiledSession,
  key: AstNode,
  relation: string,
  column: string,
): AstNode {
  const subselect = selectStmt({
    targets: [resTarget(columnRef(VISIBLE, column))],
    from: [
      rangeSubselect(
        pgCatalogFragment(session, relation, keyedOn(session, relation, column, key)),
        {
          aliasname: VISIBLE,
        },
      ),
    ],
  })
  return { SubLink: { subLinkType: 'ANY_SUBLINK', testexpr: key, subselect } }
}

/** `x.<column> OPERATOR(pg_catalog.=) <key>` for a fence, when the column is passed through. */
export function keyedOn(
  session: CompiledSession,
  relation: string,
  column: string,
  key: AstNode,
): AstNode[] {
  if (!pgCatalogPlainColumns(session, relation).has(column)) return []
  return [builtinEquals(columnRef('x', column), key)]
}

function catalogCall(name: string, args: AstNode[]): AstNode {
  return {
    FuncCall: {
      funcname: [stringNode('pg_catalog'), stringNode(name)],
      args,
      funcformat: 'COERCE_EXPLICIT_CALL',
    },
  }
}

/**
 * The guarded form of a catalog function call; `args` are the call's arguments after the
 * caller's own rewriting (their table scans are already wrapped).
 */
export function guardCatalogCall(
  session: CompiledSession,
  name: string,
  args: readonly AstNode[],
): AstNode {
  const guarded = GUARDED_FUNCTIONS[name]
  if (guarded) {
    const key = columnRef(ARG, 'k')
    const callArgs = args.map((arg, i) => (i === guarded.arg ? key : arg))
    return scalarSubquery(
      resTarget(catalogCall(name, callArgs)),
      [boundArguments([['k', qualifiedCast(args[guarded.arg] as AstNode, 'oid')]])],
      inVirtual(session, key, guarded.relation, guarded.column),
    )
  }
  const visibility = VISIBILITY_FUNCTIONS[name]
  if (visibility) return visibleInPath(session, visibility, args[0] as AstNode)
  if (name === 'pg_get_expr') return guardExpressionPrint(session, args)
  // psql's `\d` asks it for every table that foreign keys may reference.
  if (name === 'pg_partition_ancestors')
    return pgCatalogExpression(session, name, args[0] as AstNode)
  if (Object.hasOwn(LOOKUP_FUNCTIONS, name)) return descriptionLookup(session, name, args)
  return answer(session, name, args)
}

/**
 * `(SELECT x.<namespace> IN (pg_catalog, default schema) FROM <virtual relation> x
 *   WHERE x.oid = (SELECT (K)::oid))`: NULL for an OID the session cannot see, as PostgreSQL
 * answers for one that does not exist.
 */
function visibleInPath(
  session: CompiledSession,
  [relation, namespace]: readonly [string, string],
  key: AstNode,
): AstNode {
  const upstream =
    session.defaultSchema === undefined
      ? undefined
      : session.schemas.get(session.defaultSchema)?.upstream
  const path = ['pg_catalog', ...(upstream === undefined ? [] : [upstream])]
  const pathOids = selectStmt({
    targets: [resTarget(columnRef('n', 'oid'))],
    from: [rangeVar('pg_catalog', 'pg_namespace', 'n')],
    where: {
      A_Expr: {
        kind: 'AEXPR_IN',
        name: [stringNode('=')],
        lexpr: columnRef('n', 'nspname'),
        rexpr: { List: { items: path.map((p) => qualifiedCast(stringConst(p), 'name')) } },
      },
    } as AstNode,
  })
  const inPath: AstNode = {
    SubLink: {
      subLinkType: 'ANY_SUBLINK',
      testexpr: columnRef(VISIBLE, namespace),
      subselect: pathOids,
    },
  }
  const onceKey = exprSublink(
    selectStmt({ targets: [resTarget(qualifiedCast(key, 'oid'))], from: [] }),
  )
  // Looked up inside the fence: one row, not the relation's whole visible set.
  const keyed = keyedOn(session, relation, 'oid', onceKey)
  return scalarSubquery(
    resTarget(inPath),
    [rangeSubselect(pgCatalogFragment(session, relation, keyed), { aliasname: VISIBLE })],
    keyed.length > 0 ? undefined : binaryOp('=', columnRef(VISIBLE, 'oid'), onceKey),
  )
}

/** The value of a function answered without the upstream (ANSWERED_FUNCTIONS). */
function answer(session: CompiledSession, name: string, args: readonly AstNode[]): AstNode {
  if (name === 'pg_get_userbyid') return session.identity.user
  if (name === 'current_schemas') {
    const path = (names: string[]): AstNode =>
      qualifiedCast({ A_ArrayExpr: { elements: names.map((n) => stringConst(n)) } }, 'name', true)
    const schema = session.defaultSchema ?? 'public'
    const value: AstNode = {
      CaseExpr: {
        args: [{ CaseWhen: { expr: args[0] as AstNode, result: path(['pg_catalog', schema]) } }],
        defresult: path([schema]),
      },
    }
    // A scalar subquery keeps its parentheses, so `(current_schemas(true))[1]` stays valid;
    // cast, so `= ANY (current_schemas(true))` still compares with its elements (a bare
    // subquery there would be `ANY (subquery)`, comparing with the array as a whole).
    return qualifiedCast(
      exprSublink(selectStmt({ targets: [resTarget(value)], from: [] })),
      'name',
      true,
    )
  }
  const type = name === 'pg_get_serial_sequence' ? 'text' : 'int8'
  return qualifiedCast(nullConst(), type)
}

/**
 * `pg_get_expr(tree, relid [, pretty])` prints column names of `relid`: the tree must be one the
 * virtual catalog shows for that very relation, so no tree can be printed against another
 * relation's columns (which could name a hidden column).
 */
function guardExpressionPrint(session: CompiledSession, args: readonly AstNode[]): AstNode {
  const tree = columnRef(ARG, 'tree')
  const relation = columnRef(ARG, 'rel')
  // One lookup per place a tree lives, keyed on the relation inside each fence.
  const shown = EXPRESSION_SOURCES.map(
    ([source, relationColumn, treeColumn]): AstNode => ({
      SubLink: {
        subLinkType: 'EXISTS_SUBLINK',
        subselect: selectStmt({
          targets: [resTarget(numberConst(1))],
          from: [
            rangeSubselect(
              pgCatalogFragment(
                session,
                source,
                keyedOn(session, source, relationColumn, relation),
              ),
              { aliasname: VISIBLE },
            ),
          ],
          where: and(
            binaryOp('=', columnRef(VISIBLE, relationColumn), relation),
            binaryOp(
              '=',
              qualifiedCast(columnRef(VISIBLE, treeColumn), 'text'),
              qualifiedCast(tree, 'text'),
            ),
          ),
        }),
      },
    }),
  )
  return scalarSubquery(
    resTarget(catalogCall('pg_get_expr', [tree, relation, ...args.slice(2)])),
    [
      boundArguments([
        ['tree', args[0] as AstNode],
        ['rel', qualifiedCast(args[1] as AstNode, 'oid')],
      ]),
    ],
    // A NULL tree (a column without a default, in a LEFT JOIN) prints NULL: no lookup at all.
    {
      BoolExpr: {
        boolop: 'AND_EXPR',
        args: [
          { NullTest: { arg: tree, nulltesttype: 'IS_NOT_NULL' } },
          { BoolExpr: { boolop: 'OR_EXPR', args: shown } },
        ],
      },
    } as AstNode,
  )
}

/** Where the catalog keeps expression trees: relation, its relation column, its tree column. */
const EXPRESSION_SOURCES = [
  ['pg_attrdef', 'adrelid', 'adbin'],
  ['pg_constraint', 'conrelid', 'conbin'],
  ['pg_index', 'indrelid', 'indexprs'],
  ['pg_index', 'indrelid', 'indpred'],
  ['pg_class', 'oid', 'relpartbound'],
  ['pg_partitioned_table', 'partrelid', 'partexprs'],
] as const

/**
 * `obj_description` and `col_description`, as PostgreSQL defines them, over the virtual
 * `pg_description`: comments on hidden objects and denied columns are not found.
 */
function descriptionLookup(
  session: CompiledSession,
  name: string,
  args: readonly AstNode[],
): AstNode {
  const d = (column: string) => columnRef(VISIBLE, column)
  const eq = (a: AstNode, b: AstNode): AstNode => binaryOp('=', a, b)
  const key = columnRef(ARG, 'k')
  const conditions = [eq(d('objoid'), key)]
  if (name === 'col_description') {
    conditions.push(
      eq(d('classoid'), qualifiedCast(stringConst('pg_catalog.pg_class'), 'regclass')),
    )
    conditions.push(eq(d('objsubid'), args[1] as AstNode))
  } else {
    conditions.push(eq(d('objsubid'), numberConst(0)))
    if (args.length === 2) {
      // PostgreSQL's own definition: the catalog is named, and looked up in pg_catalog only.
      const catalogOid = selectStmt({
        targets: [resTarget(columnRef('c', 'oid'))],
        from: [rangeVar('pg_catalog', 'pg_class', 'c')],
        where: and(
          eq(columnRef('c', 'relname'), qualifiedCast(args[1] as AstNode, 'name')),
          eq(
            columnRef('c', 'relnamespace'),
            qualifiedCast(stringConst('pg_catalog'), 'regnamespace'),
          ),
        ),
      })
      conditions.push(eq(d('classoid'), exprSublink(catalogOid)))
    }
  }
  // The object's OID is bound once, and looked up inside the fence (LATERAL, to see it): one
  // object's comments, not every visible comment, per call (`\dt+` calls it per table).
  const fence = pgCatalogFragment(
    session,
    'pg_description',
    keyedOn(session, 'pg_description', 'objoid', key),
  )
  const lookup = selectStmt({
    targets: [resTarget(d('description'), name)],
    from: [
      boundArguments([['k', qualifiedCast(args[0] as AstNode, 'oid')]]),
      rangeSubselect(fence, { aliasname: VISIBLE }, true),
    ],
    where: and(...conditions),
  })
  // The one-argument form matches any catalog; PostgreSQL errors on several rows, this takes one.
  if (name === 'obj_description' && args.length === 1) {
    taggedBody(lookup, 'SelectStmt').limitCount = numberConst(1)
  }
  return exprSublink(lookup)
}

/**
 * `value::regclass` (and the other guarded types) for a value that is not a name literal: the
 * OID is passed through only when the virtual catalog holds it, otherwise NULL.
 */
export function guardObjectCast(
  session: CompiledSession,
  value: AstNode,
  type: string,
  label: string,
): AstNode {
  const [relation, column] = GUARDED_CASTS[type] ?? []
  if (relation === undefined || column === undefined) {
    throw new Error(`no guard for casts to ${type}`)
  }
  const key = columnRef(ARG, 'k')
  return scalarSubquery(
    resTarget(qualifiedCast(key, type), label),
    [boundArguments([['k', qualifiedCast(value, 'oid')]])],
    inVirtual(session, key, relation, column),
  )
}
