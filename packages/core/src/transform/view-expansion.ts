import type { TableReference } from '../analyze/table-reference.js'
import { type AstNode, type Pg, rangeSubselect, selectStmt, stringNode } from '../ast/node.js'
import { PalisadeError } from '../errors.js'
import type { ScanPlan } from '../session/scan-plan.js'
import { SqlState } from '../sqlstate.js'
import type { TransformContext } from './transform-context.js'

/**
 * A view read through the user's policies: its definition (already resolved by the analyzer,
 * mapped here with every pass, so its own scans are wrapped) in place of the scan, under the
 * view's own policies when it has any (docs/rewrite.md#views).
 */
export function expandView(
  ctx: TransformContext,
  reference: Extract<TableReference, { kind: 'view' }>,
  plan: ScanPlan | undefined,
  alias: Pg.Alias,
  sample: Pg.RangeTableSample | undefined,
): AstNode {
  if (sample) {
    throw new PalisadeError(
      SqlState.FeatureNotSupported,
      'TABLESAMPLE clause can only be applied to tables and materialized views',
    )
  }
  const view = reference.entry.view
  if (!plan?.fragments || view?.kind !== 'expand') {
    throw new Error('scan plan missing for an expanded view')
  }
  const body = ctx.map(reference.body)
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
        named ? { aliasname: plan.table.name, colnames: named } : { aliasname: plan.table.name },
      ),
    ],
    where: plan.fragments.where,
    fence: plan.filtered,
  })
  return rangeSubselect(inner, alias)
}
