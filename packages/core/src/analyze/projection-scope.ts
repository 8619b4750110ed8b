import type { AstNode } from '../ast/node.js'
import { PolicyDeniedError } from '../errors.js'

/** The projection-constrained column a value is computed from. */
export interface Taint {
  readonly column: string
  readonly table: string
}

/** The refusal for a statement that would output a projection-constrained column. */
export function projectionError(taint: Taint): PolicyDeniedError {
  return new PolicyDeniedError(
    `column "${taint.column}" of table "${taint.table}" is projection-constrained: it may filter, join and group but not be output`,
  )
}

/** One column a FROM item exposes; `name` is undefined where its name is not known here. */
export interface ScopeColumn {
  readonly name: string | undefined
  readonly taint: Taint | undefined
}

/**
 * A FROM item as the projection check sees it: its range name and its columns, or (opaque)
 * only the taint any of its columns may carry.
 */
export interface ScopeRelation {
  readonly name: string | undefined
  readonly columns: readonly ScopeColumn[] | undefined
  readonly opaqueTaint: Taint | undefined
  /** How a `*` writes each column out, where it is not `name.column` (a USING join's). */
  readonly written?: readonly AstNode[]
}

/** The FROM items of one query level. */
export interface ScopeLevel {
  /** Every relation a name can resolve to (join members, join aliases, merged columns). */
  readonly relations: ScopeRelation[]
  /** What an unqualified `*` expands to, item by item. */
  readonly stars: ScopeRelation[]
}

/** A relation's whole row: tainted when any of its columns is. */
export function wholeRowTaint(relation: ScopeRelation): Taint | undefined {
  if (!relation.columns) return relation.opaqueTaint
  return relation.columns.find((c) => c.taint)?.taint
}

/** The columns of a relation under a column alias list (`AS t(a, b)`), positionally. */
export function renamed(relation: ScopeRelation, aliases: readonly string[]): ScopeRelation {
  if (aliases.length === 0 || !relation.columns) return relation
  const columns = relation.columns.map((c, i) => ({ name: aliases[i] ?? c.name, taint: c.taint }))
  return { ...relation, columns }
}

/**
 * Resolves a column reference the way PostgreSQL does, but conservatively: every column it
 * could name contributes its taint. `hit` is told the level of each possible match, so the
 * caller can tell correlated references from local ones. Levels run outermost first.
 */
export function resolveColumn(
  names: readonly string[],
  levels: readonly ScopeLevel[],
  hit: (taint: Taint | undefined, level: number) => void,
): void {
  const last = names[names.length - 1] as string
  if (names.length === 1) {
    if (last === '*') {
      const level = levels.length - 1
      for (const relation of levels[level]?.relations ?? []) hit(wholeRowTaint(relation), level)
      return
    }
    if (findBare(last, levels, hit)) return
    // Not a column anywhere (or maybe not): a bare range name is its whole row.
    wholeRowByName(last, levels, hit)
    return
  }
  const qualifier = names[names.length - 2] as string
  for (let i = levels.length - 1; i >= 0; i--) {
    const matches = (levels[i] as ScopeLevel).relations.filter((r) => r.name === qualifier)
    if (matches.length === 0) continue
    for (const relation of matches) {
      if (last === '*' || !relation.columns) {
        hit(last === '*' ? wholeRowTaint(relation) : relation.opaqueTaint, i)
        continue
      }
      for (const column of relation.columns) {
        if (column.name === last || column.name === undefined) hit(column.taint, i)
      }
    }
    return
  }
  // `a.b` without a range named `a`: column `a`, field `b` (a composite column).
  resolveColumn(names.slice(0, 1), levels, hit)
}

/**
 * A bare column name: the innermost level where a known column has it decides; a level whose
 * columns are not all known may hold it too, so the search goes on past it as well. Returns
 * whether a known column matched.
 */
function findBare(
  name: string,
  levels: readonly ScopeLevel[],
  hit: (taint: Taint | undefined, level: number) => void,
): boolean {
  for (let i = levels.length - 1; i >= 0; i--) {
    const relations = (levels[i] as ScopeLevel).relations
    const known = relations.some((r) => r.columns?.some((c) => c.name === name))
    for (const relation of relations) {
      // Beside a known match, an opaque item with the name would make it ambiguous (an error).
      if (!relation.columns) {
        if (!known) hit(relation.opaqueTaint, i)
        continue
      }
      for (const column of relation.columns) {
        if (column.name === name || column.name === undefined) hit(column.taint, i)
      }
    }
    if (known) return true
  }
  return false
}

function wholeRowByName(
  name: string,
  levels: readonly ScopeLevel[],
  hit: (taint: Taint | undefined, level: number) => void,
): void {
  for (let i = levels.length - 1; i >= 0; i--) {
    const matches = (levels[i] as ScopeLevel).relations.filter((r) => r.name === name)
    for (const relation of matches) hit(wholeRowTaint(relation), i)
    if (matches.length > 0) return
  }
}
