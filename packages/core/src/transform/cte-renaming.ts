import type { TableReference } from '../analyze/table-reference.js'
import type { AstNode, Pg } from '../ast/node.js'
import type { TreePass } from '../ast/tag-dispatch.js'
import type { TransformContext } from './transform-context.js'

/**
 * CTE names the deparser cannot quote are renamed (the analyzer chose the new names): the
 * definitions here, the references by `renamedCteReference` when the scans are replaced.
 */
export function cteRenaming(ctx: TransformContext): TreePass {
  return {
    CommonTableExpr: (cte) => {
      const rename = ctx.analysis.cteRenames.get(cte)
      if (rename === undefined) return undefined
      return { CommonTableExpr: { ...ctx.map(cte), ctename: rename } }
    },
  }
}

/** A reference to a renamed CTE, under its new name (the user's alias kept); else undefined. */
export function renamedCteReference(
  rv: Pg.RangeVar,
  reference: Extract<TableReference, { kind: 'cte' }>,
  alias: Pg.Alias,
): AstNode | undefined {
  if (reference.rename === undefined) return undefined
  return { RangeVar: { ...rv, relname: reference.rename, alias } }
}
