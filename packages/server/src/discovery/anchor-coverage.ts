import { type FilterColumnResolution, filterCoverage } from '@palisade/core'
import { exposedOf } from '@palisade/store'
import type { AdminDeps } from '../http/env.js'

/** One table of an anchor-coverage report (docs/admin-api.md#relationships-anchors-and-their-checks). */
export interface CoverageEntry {
  data_source_id: string
  data_source_name: string
  schema: string
  schema_upstream: string
  table: string
  verdicts: Record<string, unknown>[]
}

function verdictOf(r: FilterColumnResolution): Record<string, unknown> {
  switch (r.kind) {
    case 'anchor_alias':
    case 'missing_column_on_alias_target':
      return { column: r.column, kind: r.kind, actual_column_name: r.actualColumn }
    case 'anchor_walk':
      return {
        column: r.column,
        kind: r.kind,
        via_relationship_id: r.relationship.id,
        via_child_column: r.relationship.childColumn,
        via_parent_column: r.relationship.parentColumn,
        parent_schema: r.relationship.parentSchema,
        parent_table: r.relationship.parentTable,
        ...(r.error === undefined ? {} : { error: r.error }),
      }
    default:
      return { column: r.column, kind: r.kind }
  }
}

async function coverageOn(
  deps: AdminDeps,
  datasource: { id: string; name: string },
  policy: { filter_expression: string; targets: Parameters<typeof filterCoverage>[0]['targets'] },
): Promise<CoverageEntry[]> {
  const { catalog, relationships: links } = deps.store
  const view = await catalog.get(datasource.id)
  const relationships = (await links.list(datasource.id)).map((r) => ({
    id: r.id,
    childSchema: r.child_schema_name,
    childTable: r.child_table_name,
    childColumn: r.child_column_name,
    parentSchema: r.parent_schema_name,
    parentTable: r.parent_table_name,
    parentColumn: r.parent_column_name,
  }))
  const anchors = (await links.listAnchors(datasource.id)).map((a) => ({
    schema: a.child_schema_name,
    table: a.child_table_name,
    resolvedColumn: a.resolved_column_name,
    relationshipId: a.relationship_id,
    actualColumn: a.actual_column_name,
  }))
  const tables = await filterCoverage({
    filterExpression: policy.filter_expression,
    targets: policy.targets,
    catalog: exposedOf(view),
    relationships,
    anchors,
  })
  return tables.map((t) => ({
    data_source_id: datasource.id,
    data_source_name: datasource.name,
    schema: t.visibleSchema,
    schema_upstream: t.schema,
    table: t.table,
    verdicts: t.columns.map(verdictOf),
  }))
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * `GET /policies/{id}/anchor-coverage` (docs/admin-api.md#relationships-anchors-and-their-checks): a dry run of row-filter column
 * resolution, with core's binder, over every exposed table the targets match on every
 * datasource where the policy is assigned. Other policy types have no coverage.
 */
export async function anchorCoverage(deps: AdminDeps, policyId: string) {
  const policy = await deps.store.policies.get(policyId)
  const result = { policy_id: policy.id, policy_type: policy.policy_type }
  const filter = policy.filter_expression
  if (policy.policy_type !== 'row_filter' || !filter) return { ...result, coverage: [] }
  const datasources = new Map<string, string>()
  for (const a of policy.assignments ?? []) datasources.set(a.datasource_id, a.datasource_name)
  const coverage: CoverageEntry[] = []
  for (const [id, name] of datasources) {
    const target = { filter_expression: filter, targets: policy.targets }
    coverage.push(...(await coverageOn(deps, { id, name }, target)))
  }
  coverage.sort(
    (a, b) =>
      byText(a.data_source_name, b.data_source_name) ||
      byText(a.schema, b.schema) ||
      byText(a.table, b.table),
  )
  return { ...result, coverage }
}
