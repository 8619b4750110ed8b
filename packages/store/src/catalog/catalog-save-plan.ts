// What a save_catalog changes, worked out before its transaction from the stored catalog.
import type { RelationName } from '@palisade/core'
import type { Db } from '../kernel/db.js'
import { turnTaker } from '../kernel/slices.js'
import { definitionOf, type Exposure } from './catalog-exposure.js'
import type { SelectionRows, SelectionTable } from './catalog-selection.js'
import { type CatalogView, readColumnsOf, readOutline } from './catalog-view.js'
import type { Staged } from './catalog-write.js'

/** A save compared with the catalog version it read. */
export interface PlannedSave {
  version: number
  /** The exposure before the save. */
  before: Exposure
  /** Tables (ids) whose row and columns the save leaves exactly as stored: not written. */
  unchanged: ReadonlySet<string>
}

type StoredTable = CatalogView['schemas'][number]['tables'][number]

/**
 * Compares a save's rows with the stored catalog, its columns read a slice of tables at a time
 * outside any transaction, so the save's transaction (which holds every other request of the embedded
 * store) writes only what differs: a save of 10,000 unchanged tables writes none of them.
 * Valid only while the catalog stays at `version` (the transaction checks it).
 */
export async function planSave(
  db: Db,
  datasourceId: string,
  version: number,
  rows: SelectionRows,
  staged: Staged,
): Promise<PlannedSave> {
  // Tables the save stored into new schemas just now are written already: no columns to read.
  const view = await readOutline(db, datasourceId)
  const stored = new Map<string, StoredTable>()
  for (const s of view.schemas) for (const t of s.tables) stored.set(t.id, t)
  const read = [...stored.keys()].filter((id) => !staged.settled.has(id))
  for (const [id, columns] of await readColumnsOf(db, read)) {
    const table = stored.get(id)
    if (table) table.columns = columns
  }
  const unchanged = new Set<string>()
  const turn = turnTaker()
  for (const table of rows.tables) {
    const now = stored.get(table.row.id)
    if (now && !staged.settled.has(now.id) && sameTable(table, now)) unchanged.add(now.id)
    await turn()
  }
  return { version, before: exposureOfView(view), unchanged }
}

/** Whether writing `table` would change nothing (as `upsertTables` and `replaceColumns` compare). */
function sameTable({ row, columns }: SelectionTable, stored: StoredTable): boolean {
  if (row.table_type !== stored.table_type || row.is_selected !== stored.is_selected) return false
  if (row.set_definition) {
    if (row.view_definition !== (stored.view_definition ?? null)) return false
    if (!sameRelations(row.view_reads, stored.view_reads ?? null)) return false
  }
  if (row.set_ancestors && !sameRelations(row.ancestors, stored.ancestors ?? null)) return false
  if (row.set_key && !sameList(row.primary_key, stored.primary_key ?? null)) return false
  if (columns === null) return true
  if (columns.length !== stored.columns.length) return false
  const byId = new Map(stored.columns.map((c) => [c.id, c]))
  return columns.every((c) => {
    const s = byId.get(c.id)
    return (
      s !== undefined &&
      s.ordinal_position === c.ordinal_position &&
      s.data_type === c.data_type &&
      s.is_nullable === c.is_nullable &&
      (s.column_default ?? null) === c.column_default &&
      (c.is_selected === null || s.is_selected === c.is_selected)
    )
  })
}

/** Relation lists compared by names (jsonb stores an object's keys in its own order). */
function sameRelations(a: readonly RelationName[] | null, b: readonly RelationName[] | null) {
  const names = (list: readonly RelationName[] | null) =>
    list === null ? null : list.map((r) => [r.schema, r.table])
  return JSON.stringify(names(a)) === JSON.stringify(names(b))
}

function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** The exposure of a stored catalog view: what `readExposure` reads, from rows already read. */
export function exposureOfView(view: CatalogView): Exposure {
  const out: Exposure = { aliases: new Map(), tables: new Map(), definitions: new Map() }
  for (const s of view.schemas) {
    if (!s.is_selected) continue
    out.aliases.set(s.schema_name, s.schema_alias || null)
    for (const t of s.tables) {
      if (!t.is_selected) continue
      const key = `${s.schema_name}.${t.table_name}`
      const columns = t.columns
        .filter((c) => c.is_selected)
        .sort((a, b) => a.ordinal_position - b.ordinal_position)
        .map((c) => c.column_name)
      out.tables.set(key, columns)
      out.definitions.set(
        key,
        definitionOf(
          t.table_type,
          t.view_definition ?? null,
          t.view_reads ?? null,
          t.ancestors ?? null,
          t.primary_key ?? null,
          columns,
        ),
      )
    }
  }
  return out
}
