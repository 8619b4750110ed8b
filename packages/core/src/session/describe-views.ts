import type { Catalog, RelationName } from '../catalog.types.js'
import { compileSessionSync } from './compile-session.js'

/** How Palisade reads one view, materialized view or foreign table (admin catalog view). */
export interface ViewDescription {
  /**
   * `expanded`: read through its definition with each user's policies on what it reads.
   * `fail_closed`: read as it is upstream by users with no policy on what it reads (or with
   * policies that target it), and hidden from everyone else.
   */
  readonly expansion: 'expanded' | 'fail_closed'
  /** Why it cannot be expanded; null when it is. */
  readonly reason: string | null
  /** What it reads (upstream names), when known. */
  readonly reads: readonly RelationName[] | null
}

/**
 * Describes every exposed relation that is not a plain table, keyed `schema.table` (upstream
 * names). Needs the parser (`loadParser()`).
 */
export function describeViews(catalog: Catalog): Map<string, ViewDescription> {
  const session = compileSessionSync({
    user: { id: '', username: '', roles: [], attributes: {} },
    datasource: { name: '', accessMode: 'open' },
    catalog,
    attributeDefinitions: [],
    policies: [],
  })
  const out = new Map<string, ViewDescription>()
  for (const schema of session.schemas.values()) {
    for (const entry of schema.tables.values()) {
      const view = session.viewOf(entry)
      if (!view) continue
      out.set(`${entry.exposed.schema}.${entry.exposed.name}`, {
        expansion: view.kind === 'expand' ? 'expanded' : 'fail_closed',
        reason: view.kind === 'expand' ? null : view.reason,
        reads: entry.exposed.table.reads ?? null,
      })
    }
  }
  return out
}
