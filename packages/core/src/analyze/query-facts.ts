/** Facts about a query that `query`-context decision functions see (docs/decision-functions.md#the-context-ctx `ctx.query`). */
export interface QueryFacts {
  tables: { datasource: string; schema: string; table: string }[]
  columns: string[]
  join_count: number
  has_aggregation: boolean
  has_subquery: boolean
  has_where: boolean
  statement_type: string
}
