import { expressionText } from '../ast/deparse.js'
import { mapTree } from '../ast/map-tree.js'
import {
  type AstNode,
  and,
  binaryOp,
  columnRef,
  existsSublink,
  nullConst,
  numberConst,
  type Pg,
  rangeVar,
  resTarget,
  selectStmt,
  stringsOf,
} from '../ast/node.js'
import { nodeBody } from '../ast/tag-dispatch.js'
import type { CatalogTable, ColumnAnchor, TableRelationship } from '../catalog.types.js'
import { AccessRulesError } from '../errors.js'
import type { AttributeDefinition, SessionUser } from '../session-context.types.js'
import { expandMaskCalls } from './mask-library.js'
import type { PolicyExpression } from './policy-expression.js'
import { MASKED_COLUMN } from './template-placeholders.js'
import { listAsArray, resolveTemplateValue, type TemplateValue } from './template-values.js'

/** The scan an expression is bound to: column references are qualified with `qualifier`. */
export interface BindTarget {
  readonly qualifier: string
  readonly schema: string
  readonly table: string
  readonly columns: ReadonlySet<string>
}

/** What binding needs from the session: the user for templates, the catalog for anchors. */
export interface BindEnvironment {
  readonly user: SessionUser
  readonly definitions: ReadonlyMap<string, AttributeDefinition>
  findTable(schema: string, table: string): CatalogTable | undefined
  findAnchor(schema: string, table: string, column: string): ColumnAnchor | undefined
  findRelationship(id: string): TableRelationship | undefined
  /** The datasource's key of keyed-hash masks (`mask.hash`); never shown to the session. */
  readonly maskKey?: string | undefined
}

/** Walks through relationships stop here (docs/admin-api.md#relationships-anchors-and-their-checks). */
export const MAX_ANCHOR_HOPS = 3

/**
 * Binds a row filter to one scan: templates become literals, columns are qualified, and a
 * column the table lacks is resolved through its anchor (alias, or a walk to the parent as an
 * EXISTS semi-join). Anything unresolvable throws, so the scan never runs unfiltered.
 */
export function bindFilter(
  expression: PolicyExpression,
  target: BindTarget,
  env: BindEnvironment,
  hops = 0,
): AstNode {
  const renames = new Map<string, string>()
  let walk: TableRelationship | undefined
  for (const column of expression.columns) {
    if (target.columns.has(column)) continue
    const anchor = env.findAnchor(target.schema, target.table, column)
    if (anchor?.actualColumn) {
      if (!target.columns.has(anchor.actualColumn)) {
        throw unresolved(column, target, `its alias "${anchor.actualColumn}" is missing`)
      }
      renames.set(column, anchor.actualColumn)
    } else if (anchor?.relationshipId) {
      const relationship = env.findRelationship(anchor.relationshipId)
      if (!relationship) throw unresolved(column, target, 'its relationship is missing')
      if (walk && walk.id !== relationship.id) {
        throw unresolved(column, target, 'columns resolve through different relationships')
      }
      walk = relationship
    } else {
      throw unresolved(column, target, 'no column anchor')
    }
  }
  if (walk) return bindThroughRelationship(expression, target, env, walk, hops)
  return bindColumns(expression, target.qualifier, renames, env)
}

/** Binds a mask expression: columns of the scan only, no anchors. */
export function bindMask(
  expression: PolicyExpression,
  target: BindTarget,
  env: BindEnvironment,
  masked: { name: string; type: string },
): AstNode {
  for (const column of expression.columns) {
    if (column !== MASKED_COLUMN && !target.columns.has(column)) {
      throw new AccessRulesError(
        `mask on ${target.schema}.${target.table} references missing column "${column}"`,
      )
    }
  }
  // `{column}` is the masked column's own raw value.
  const bound = bindColumns(
    expression,
    target.qualifier,
    new Map([[MASKED_COLUMN, masked.name]]),
    env,
  )
  if (expression.masks.length === 0) return bound
  return expandMaskCalls(bound, masked, env.maskKey, expressionText)
}

function bindThroughRelationship(
  expression: PolicyExpression,
  target: BindTarget,
  env: BindEnvironment,
  relationship: TableRelationship,
  hops: number,
): AstNode {
  if (hops + 1 > MAX_ANCHOR_HOPS) {
    throw unresolved(expression.columns.join(', '), target, `more than ${MAX_ANCHOR_HOPS} hops`)
  }
  if (!target.columns.has(relationship.childColumn)) {
    throw unresolved(relationship.childColumn, target, 'the relationship column is missing')
  }
  const parent = env.findTable(relationship.parentSchema, relationship.parentTable)
  if (!parent)
    throw unresolved(expression.columns.join(', '), target, 'the parent table is missing')
  const alias = `_palisade_parent_${hops + 1}`
  const parentTarget: BindTarget = {
    qualifier: alias,
    schema: relationship.parentSchema,
    table: relationship.parentTable,
    columns: new Set(parent.columns.map((c) => c.name)),
  }
  const join = binaryOp(
    '=',
    columnRef(alias, relationship.parentColumn),
    columnRef(target.qualifier, relationship.childColumn),
  )
  const where = and(join, bindFilter(expression, parentTarget, env, hops + 1))
  return existsSublink(
    selectStmt({
      targets: [resTarget(numberConst(1))],
      from: [rangeVar(relationship.parentSchema, relationship.parentTable, alias)],
      where,
    }),
  )
}

function bindColumns(
  expression: PolicyExpression,
  qualifier: string,
  renames: ReadonlyMap<string, string>,
  env: BindEnvironment,
): AstNode {
  const values = expression.variables.map((key) =>
    resolveTemplateValue(key, env.user, env.definitions),
  )
  const bindValue = (node: AstNode): AstNode => mapTree(node, mapper)
  const mapper = (
    _node: AstNode,
    tag: string,
    body: Record<string, unknown>,
  ): AstNode | undefined => {
    if (tag === 'ColumnRef') {
      const name = stringsOf((body as Pg.ColumnRef).fields)[0] as string
      return columnRef(qualifier, renames.get(name) ?? name)
    }
    if (tag === 'ParamRef') return scalarOf(values[((body as Pg.ParamRef).number ?? 1) - 1])
    if (tag === 'A_Expr' && (body as Pg.A_Expr).kind === 'AEXPR_IN') {
      const expr = body as Pg.A_Expr
      const items = expr.rexpr as { List?: { items?: AstNode[] } } | AstNode[] | undefined
      const list = Array.isArray(items)
        ? items
        : (items as { List?: { items?: AstNode[] } })?.List?.items
      if (!list) return undefined
      const spliced = list.flatMap((item) => {
        const param = nodeBody(item, 'ParamRef')
        if (!param) return [bindValue(item)]
        const value = values[(param.number ?? 1) - 1]
        return value?.kind === 'list' ? [...value.nodes] : [scalarOf(value)]
      })
      const rexpr = spliced.length === 0 ? [nullConst()] : spliced
      return {
        A_Expr: {
          ...expr,
          lexpr: expr.lexpr === undefined ? undefined : bindValue(expr.lexpr),
          rexpr: Array.isArray(items) ? rexpr : { List: { items: rexpr } },
        },
      } as AstNode
    }
    return undefined
  }
  return bindValue(expression.node)
}

function scalarOf(value: TemplateValue | undefined): AstNode {
  if (!value) return nullConst()
  return value.kind === 'scalar' ? value.node : listAsArray(value.nodes)
}

function unresolved(column: string, target: BindTarget, why: string): AccessRulesError {
  return new AccessRulesError(
    `filter column "${column}" cannot be resolved on ${target.schema}.${target.table}: ${why}`,
  )
}
