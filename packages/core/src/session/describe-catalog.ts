import type { AppliedPolicy } from '../policy/policy.types.js'
import type { CompiledSession } from './compiled-session.js'

/** One column as a session sees it. */
export interface VisibleColumn {
  readonly name: string
  readonly type: string
  /** Whether a column mask replaces its values. */
  readonly masked: boolean
}

/** One relation a session can read, under the names it uses. */
export interface VisibleTable {
  readonly name: string
  readonly kind: string
  /** Visible columns in table order (denied ones are absent). */
  readonly columns: readonly VisibleColumn[]
  /** The table's columns this session cannot see (column_deny, or no column_allow). */
  readonly hiddenColumns: readonly string[]
  /** Whether a row filter applies to its rows. */
  readonly rowFiltered: boolean
  /** Whether a query-time decision function can change the rules per statement. */
  readonly decidedPerQuery: boolean
  /** The policies that shape it (query-time decisions skipped, as catalogs show them). */
  readonly policies: readonly AppliedPolicy[]
}

export interface VisibleSchema {
  /** The name the session uses (an alias, or the upstream name). */
  readonly name: string
  /** The upstream schema (what policies and query facts name). */
  readonly upstream: string
  readonly tables: readonly VisibleTable[]
}

/**
 * The catalog one compiled session sees: every relation it can read with its visible columns,
 * which of them are masked, and whether its rows are filtered. Hidden relations (table_deny,
 * no column_allow in policy_required mode, a view that fails closed for this user) are absent,
 * as they are from the session's pg_catalog. Sorted by name, so it diffs well.
 */
export function describeCatalog(session: CompiledSession): VisibleSchema[] {
  const schemas: VisibleSchema[] = []
  for (const schema of session.schemas.values()) {
    const tables: VisibleTable[] = []
    for (const entry of schema.tables.values()) {
      const plan = entry.plan
      if (!plan || session.viewOf(entry)?.kind === 'hidden') continue
      const types = new Map(entry.exposed.table.columns.map((c) => [c.name, c.type]))
      tables.push({
        name: entry.exposed.name,
        kind: entry.exposed.table.kind ?? 'TABLE',
        columns: plan.columns.map((name) => ({
          name,
          type: types.get(name) ?? 'unknown',
          masked: plan.masked.has(name),
        })),
        hiddenColumns: [...plan.denied],
        rowFiltered: plan.filtered,
        decidedPerQuery: entry.dynamic,
        policies: plan.applied,
      })
    }
    if (tables.length === 0) continue
    tables.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    schemas.push({ name: schema.visible, upstream: schema.upstream, tables })
  }
  return schemas.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
