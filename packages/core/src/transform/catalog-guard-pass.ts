import type { PushdownCandidate } from '../analyze/leakproof-conjuncts.js'
import type { TableReference } from '../analyze/table-reference.js'
import { statementFragment } from '../ast/deparse.js'
import {
  type AstNode,
  builtinEquals,
  columnRef,
  type NodeBody,
  type Pg,
  rangeSubselect,
  rangeVar,
  resTarget,
  selectStmt,
  stringConst,
  stringNode,
  stringsOf,
  tagOf,
} from '../ast/node.js'
import { nodeBody, type TreePass } from '../ast/tag-dispatch.js'
import { REG_TYPES } from '../policy/function-allowlist.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { castLabel } from '../virtual-catalog/cast-labels.js'
import {
  catalogFunctionName,
  guardCatalogCall,
  guardObjectCast,
  keyedOn,
} from '../virtual-catalog/catalog-guards.js'
import {
  informationSchemaList,
  informationSchemaPushable,
  informationSchemaSubquery,
  type VirtualInformationSchemaView,
} from '../virtual-catalog/information-schema.js'
import {
  pgCatalogFragment,
  pgCatalogKeyType,
  pgCatalogPlainColumns,
  pgCatalogReaches,
  qualifiedCast,
} from '../virtual-catalog/pg-catalog.js'
import { isCatalogKey } from '../virtual-catalog/pg-catalog-templates.js'
import { copyConjuncts } from './inner-scan.js'
import type { TransformContext } from './transform-context.js'

/**
 * The virtual catalog pass: catalog relations become the user's filtered form, and the guards
 * on what reads the upstream catalog by value: catalog functions
 * get only the OIDs the user may see, object-name casts of a name literal get its upstream
 * name (the analyzer checked it), and any other value cast to an object-identifier type is
 * guarded (virtual-catalog/catalog-guards.ts).
 */
export function catalogGuards(ctx: TransformContext): TreePass {
  const { session, analysis } = ctx
  return {
    FuncCall: (call) => {
      const name = catalogFunctionName(stringsOf(call.funcname))
      if (name === undefined) return undefined
      const args = (call.args ?? []).map((arg) => ctx.map(arg))
      return guardCatalogCall(session, name, args)
    },
    A_Const: (constant, node) => {
      // A name literal that takes an object-identifier type from its siblings.
      const upstreamName = analysis.objectNames.get(constant)
      return upstreamName === undefined ? node : stringConst(upstreamName)
    },
    TypeCast: (cast) => {
      const upstreamName = analysis.objectNames.get(cast)
      if (upstreamName !== undefined)
        return { TypeCast: { ...cast, arg: stringConst(upstreamName) } }
      const names = stringsOf(cast.typeName?.names)
      const type = names[names.length - 1] ?? ''
      if (!REG_TYPES.has(type)) return undefined
      return guardObjectCast(session, ctx.map(cast.arg as AstNode), type, castLabel(cast, type))
    },
  }
}

/**
 * Guards an expression that takes an object-identifier type from its siblings (`coalesce(x,
 * 16384)` beside a regclass): its inside is mapped as usual, then the whole is guarded like a
 * cast. Undefined for every other node.
 */
export function impliedCatalogGuards(
  ctx: TransformContext,
): (node: AstNode, body: NodeBody) => AstNode | undefined {
  // The node whose own guard is being built (so its inside is mapped as usual).
  let guarding: object | undefined
  return (node, body) => {
    const impliedType = ctx.analysis.objectGuards.get(body)
    if (impliedType === undefined || guarding === body) return undefined
    const outer = guarding
    guarding = body
    const value = ctx.map(node)
    guarding = outer
    return guardObjectCast(ctx.session, value, impliedType, impliedType)
  }
}

/**
 * A relation of the virtual pg_catalog or information_schema: the user's filtered form. A
 * pg_catalog relation takes the statement's leakproof conditions comparing one of its key
 * columns with a literal (written or implied by a join), inside its fence.
 */
export function virtualCatalogRelation(
  session: CompiledSession,
  reference: Extract<TableReference, { kind: 'information_schema' | 'pg_catalog' }>,
  alias: Pg.Alias,
  candidates?: readonly PushdownCandidate[],
): AstNode {
  const literal = (candidates ?? []).filter(
    (c) => !c.outer && !c.through && comparesWithLiterals(c.node),
  )
  if (reference.kind !== 'pg_catalog') {
    const pushable = informationSchemaPushable(session, reference.view)
    const pushed = copyConjuncts(literal, 'x', (column) => pushable.has(column), true)
    return rangeSubselect(catalogView(session, reference.view, pushed), alias)
  }
  const plain = pgCatalogPlainColumns(session, reference.relation)
  const pushed = copyConjuncts(literal, 'x', (column) => plain.has(column), true)
  // A relation a literal already keys needs no key from its left: made LATERAL, it would
  // instead be looked up once per row of a side that may have to be computed whole. Nor does
  // one in a wholesale listing, whose left side is every visible object (catalog-listing.ts).
  const keyed = literal.some((c) => isCatalogKey(reference.relation, c.column))
  const outer = (candidates ?? []).filter((c) => !((keyed || session.catalogListing) && c.lateral))
  const correlated = correlatedConjuncts(session, reference.relation, plain, outer)
  pushed.push(...correlated.conjuncts)
  if (!keyed) pushed.push(...throughConjuncts(plain, candidates ?? []))
  return rangeSubselect(
    pgCatalogFragment(session, reference.relation, pushed),
    alias,
    correlated.lateral,
  )
}

/**
 * `x.<column> = ANY (SELECT k.<y> FROM pg_catalog.<relation> k WHERE k.<z> = <literal>)` for a
 * join to a catalog relation that a literal keys (`i.indexrelid = c2.oid AND i.indrelid =
 * 16385`): the statement implies it, and it reads only OIDs of the real catalog, which the
 * fence's visibility filter still decides on; the fence then holds those few rows.
 */
function throughConjuncts(
  plain: ReadonlySet<string>,
  candidates: readonly PushdownCandidate[],
): AstNode[] {
  const out: AstNode[] = []
  for (const { column, through } of candidates) {
    if (!through || !plain.has(column) || pgCatalogKeyType(column) !== 'oid') continue
    const { schemaname, relname } = through.relation
    if (schemaname !== undefined && schemaname !== 'pg_catalog') continue
    if (!relname || !isCatalogKey(relname, through.key)) continue
    if (pgCatalogKeyType(through.column) !== 'oid') continue
    const subselect = selectStmt({
      targets: [resTarget(columnRef('k', through.column))],
      from: [rangeVar('pg_catalog', relname, 'k')],
      where: builtinEquals(columnRef('k', through.key), through.literal),
    })
    out.push({
      SubLink: {
        subLinkType: 'ANY_SUBLINK',
        testexpr: columnRef('x', column),
        operName: [stringNode('pg_catalog'), stringNode('=')],
        subselect,
      },
    } as AstNode)
  }
  return out.slice(0, 2)
}

/**
 * Whether a statement compares a key column of a pg_catalog relation with a literal (`c.oid =
 * '16390'`, `attrelid = 16390`, written or implied by a join): a statement about a few objects.
 */
export function namesCatalogKeys(
  pushdowns: ReadonlyMap<object, readonly PushdownCandidate[]>,
): boolean {
  for (const [scan, candidates] of pushdowns) {
    const { schemaname, relname } = scan as Pg.RangeVar
    if (schemaname !== undefined && schemaname !== 'pg_catalog') continue
    const keyed = candidates.some(
      (c) =>
        !c.outer &&
        !c.through &&
        isCatalogKey(relname ?? '', c.column) &&
        stringsOf(nodeBody(c.node, 'A_Expr')?.name).at(-1) === '=' &&
        comparesWithLiterals(c.node),
    )
    if (keyed) return true
  }
  return false
}

/**
 * A correlated subquery's keys (`d.adrelid = a.attrelid`, `a` an enclosing query's relation),
 * inside the fence as `x.adrelid OPERATOR(pg_catalog.=) a.attrelid::pg_catalog.oid`: the
 * built-in equality of the key's type, leakproof whatever the outer value, so a lookup per
 * outer row reads that row's catalog entries instead of the whole visible set.
 */
function correlatedConjuncts(
  session: CompiledSession,
  relation: string,
  plain: ReadonlySet<string>,
  candidates: readonly PushdownCandidate[],
): { conjuncts: AstNode[]; lateral: boolean } {
  const conjuncts: AstNode[] = []
  let lateral = false
  for (const candidate of candidates) {
    const outer = candidate.outer
    const type = pgCatalogKeyType(candidate.column)
    const qualifier = stringsOf(outer?.fields)[0]
    if (!outer || !type || !qualifier || !plain.has(candidate.column)) continue
    if (!pgCatalogReaches(session, relation, qualifier) || conjuncts.length >= 4) continue
    const value = qualifiedCast({ ColumnRef: outer } as AstNode, type)
    conjuncts.push(...keyedOn(session, relation, candidate.column, value))
    lateral ||= candidate.lateral === true
  }
  return { conjuncts, lateral }
}

/**
 * Whether a candidate compares with plain literals only (`= '16385'`, `IN (1, 2)`): no cast,
 * which inside the fence could resolve an object name the catalog guards would have refused.
 */
function comparesWithLiterals(node: AstNode): boolean {
  const expr = nodeBody(node, 'A_Expr')
  if (!expr) return false
  const sides = [expr.lexpr, expr.rexpr].flatMap((side) =>
    tagOf(side) === 'List' ? ((side as { List: { items?: AstNode[] } }).List.items ?? []) : [side],
  )
  return sides.every((side) => tagOf(side) === 'ColumnRef' || tagOf(side) === 'A_Const')
}

/**
 * The session's filtered form of a catalog view: deparsed once per session, or per statement
 * when it takes the statement's conditions inside its fence.
 */
function catalogView(
  session: CompiledSession,
  view: VirtualInformationSchemaView,
  pushed: readonly AstNode[],
): AstNode {
  session.catalogListsRead.add(informationSchemaList(view))
  if (pushed.length > 0) return statementFragment(informationSchemaSubquery(session, view, pushed))
  let fragment = session.catalogViews.get(view)
  if (!fragment) {
    fragment = statementFragment(informationSchemaSubquery(session, view))
    session.catalogViews.set(view, fragment)
  }
  return fragment
}
