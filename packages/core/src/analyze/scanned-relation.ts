import { type AstNode, bodyOf, type Pg } from '../ast/node.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { ScanPlan } from '../session/scan-plan.js'
import type { QueryAnalysis } from './query-analyzer.js'

/** A FROM item that scans a table or view by name, with this session's plan for it. */
export interface ScannedRelation {
  readonly rv: Pg.RangeVar
  /** The range name the query uses for it: its alias, or the relation's name. */
  readonly alias: string
  readonly kind: 'table' | 'view'
  readonly plan: ScanPlan
}

/**
 * The table or view a FROM item scans, plain or under TABLESAMPLE; undefined for any other
 * item (a join, subquery, function, CTE or catalog view) and for a relation without a plan.
 */
export function scannedRelation(
  item: AstNode,
  analysis: QueryAnalysis,
  plans: ReadonlyMap<TableEntry, ScanPlan>,
): ScannedRelation | undefined {
  const sample = bodyOf<Pg.RangeTableSample>(item, 'RangeTableSample')
  const rv = bodyOf<Pg.RangeVar>(sample ? sample.relation : item, 'RangeVar')
  const reference = rv ? analysis.references.get(rv) : undefined
  if (!rv || (reference?.kind !== 'table' && reference?.kind !== 'view')) return undefined
  const plan = plans.get(reference.entry)
  if (!plan) return undefined
  return { rv, alias: rv.alias?.aliasname ?? rv.relname ?? '', kind: reference.kind, plan }
}
