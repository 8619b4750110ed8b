import { loadParser } from '../ast/parse.js'
import type { Catalog, CatalogTable, ColumnAnchor, TableRelationship } from '../catalog.types.js'
import { isPalisadeError } from '../errors.js'
import { type BindEnvironment, bindFilter } from './bind-expression.js'
import type { PolicyTarget } from './policy.types.js'
import { parsePolicyExpression } from './policy-expression.js'
import { targetsMatchTable } from './target-pattern.js'

/**
 * How one filter column resolves on one table. `anchor_walk` shows the first hop only; its
 * `error` is set when the walk fails further on (a missing parent column, too many hops, a
 * cycle), in which case queries on the table fail like `missing_anchor`.
 */
export type FilterColumnResolution =
  | { column: string; kind: 'on_table' }
  | { column: string; kind: 'anchor_alias'; actualColumn: string }
  | { column: string; kind: 'missing_column_on_alias_target'; actualColumn: string }
  | { column: string; kind: 'anchor_walk'; relationship: TableRelationship; error?: string }
  | { column: string; kind: 'missing_anchor' }

/** The resolution of every filter column on one exposed table. */
export interface FilterTableCoverage {
  /** Upstream schema name. */
  schema: string
  /** The name SQL users see for the schema: its alias, or the upstream name. */
  visibleSchema: string
  table: string
  /** One entry per column the filter reads, sorted by column name. */
  columns: FilterColumnResolution[]
}

/** What a dry run needs: the filter, its targets and one datasource's catalog and links. */
export interface FilterCoverageInput {
  filterExpression: string
  targets: readonly PolicyTarget[]
  /** The exposed catalog (only exposed objects). */
  catalog: Catalog
  relationships?: readonly TableRelationship[]
  anchors?: readonly ColumnAnchor[]
}

const NOBODY = { id: '', username: '', roles: [], attributes: {} }

/**
 * Dry-runs row-filter column resolution (docs/admin-api.md#relationships-anchors-and-their-checks, anchor coverage) over every exposed
 * table the targets match, with the binder queries use, so the verdicts cannot drift from
 * enforcement. Throws `ExpressionError` when the filter does not parse.
 */
export async function filterCoverage(input: FilterCoverageInput): Promise<FilterTableCoverage[]> {
  await loadParser()
  const filterColumns = [...new Set(parsePolicyExpression(input.filterExpression).columns)].sort()
  const env = bindEnvironmentOf(input)
  const out: FilterTableCoverage[] = []
  for (const schema of input.catalog.schemas) {
    for (const table of schema.tables) {
      if (!targetsMatchTable(input.targets, schema.name, table.name)) continue
      out.push({
        schema: schema.name,
        visibleSchema: schema.alias ? schema.alias : schema.name,
        table: table.name,
        columns: filterColumns.map((column) => resolveColumn(column, schema.name, table, env)),
      })
    }
  }
  return out
}

function resolveColumn(
  column: string,
  schema: string,
  table: CatalogTable,
  env: BindEnvironment,
): FilterColumnResolution {
  const columns = new Set(table.columns.map((c) => c.name))
  if (columns.has(column)) return { column, kind: 'on_table' }
  const anchor = env.findAnchor(schema, table.name, column)
  if (anchor?.actualColumn) {
    const kind = columns.has(anchor.actualColumn)
      ? 'anchor_alias'
      : 'missing_column_on_alias_target'
    return { column, kind, actualColumn: anchor.actualColumn }
  }
  const relationship = anchor?.relationshipId
    ? env.findRelationship(anchor.relationshipId)
    : undefined
  if (!relationship) return { column, kind: 'missing_anchor' }
  // The rest of the walk is checked by binding this one column as a query would.
  const probe = parsePolicyExpression(`${quoteIdent(column)} IS NULL`)
  const target = { qualifier: table.name, schema, table: table.name, columns }
  try {
    bindFilter(probe, target, env)
    return { column, kind: 'anchor_walk', relationship }
  } catch (error) {
    if (!isPalisadeError(error)) throw error
    return { column, kind: 'anchor_walk', relationship, error: error.auditMessage }
  }
}

function bindEnvironmentOf(input: FilterCoverageInput): BindEnvironment {
  const tables = new Map<string, CatalogTable>()
  for (const schema of input.catalog.schemas) {
    for (const table of schema.tables) tables.set(key(schema.name, table.name), table)
  }
  const anchors = new Map<string, ColumnAnchor>()
  for (const anchor of input.anchors ?? []) {
    anchors.set(key(anchor.schema, anchor.table, anchor.resolvedColumn), anchor)
  }
  const relationships = new Map((input.relationships ?? []).map((r) => [r.id, r]))
  return {
    user: NOBODY,
    definitions: new Map(),
    findTable: (schema, table) => tables.get(key(schema, table)),
    findAnchor: (schema, table, column) => anchors.get(key(schema, table, column)),
    findRelationship: (id) => relationships.get(id),
  }
}

function key(...parts: string[]): string {
  return parts.join('\u0000')
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
