import type { TreePass } from '../ast/tag-dispatch.js'
import type { TransformContext } from './transform-context.js'

/**
 * CTE names the deparser cannot quote are renamed (the analyzer chose the new names): here the
 * definitions; the references are renamed with the scans (scan-wrapping-transformer.ts).
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
