import type { TableReference } from '../analyze/table-reference.js'
import { statementFragment } from '../ast/deparse.js'
import {
  type AstNode,
  type NodeBody,
  type Pg,
  rangeSubselect,
  stringConst,
  stringsOf,
} from '../ast/node.js'
import type { TreePass } from '../ast/tag-dispatch.js'
import { REG_TYPES } from '../policy/function-allowlist.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { castLabel } from '../virtual-catalog/cast-labels.js'
import {
  catalogFunctionName,
  guardCatalogCall,
  guardObjectCast,
} from '../virtual-catalog/catalog-guards.js'
import {
  informationSchemaSubquery,
  type VirtualInformationSchemaView,
} from '../virtual-catalog/information-schema.js'
import { pgCatalogFragment } from '../virtual-catalog/pg-catalog.js'
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

/** A relation of the virtual pg_catalog or information_schema: the user's filtered form. */
export function virtualCatalogRelation(
  session: CompiledSession,
  reference: Extract<TableReference, { kind: 'information_schema' | 'pg_catalog' }>,
  alias: Pg.Alias,
): AstNode {
  return rangeSubselect(
    reference.kind === 'pg_catalog'
      ? pgCatalogFragment(session, reference.relation)
      : catalogView(session, reference.view),
    alias,
  )
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
