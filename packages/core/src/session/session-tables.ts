import type { CatalogTable } from '../catalog.types.js'
import type { TableEntry } from './compiled-session.js'

/** A table's visible columns without building its entry; undefined when only a build can tell. */
export type ColumnsOf = (table: CatalogTable) => readonly string[] | null | undefined

export interface TableVisibility {
  readonly table: CatalogTable
  /** Visible columns in table order, or null when the table is hidden from the session. */
  readonly columns: readonly string[] | null
}

/**
 * The tables of one schema as one session reads them. An entry (its policies and scan plan) is
 * built when the session first names the table and kept for the session's life, so compiling a
 * session costs nothing per exposed table; iterating (catalog queries) builds the rest.
 */
export class SessionTables {
  readonly #source: ReadonlyMap<string, CatalogTable>
  readonly #build: (table: CatalogTable) => TableEntry
  readonly #settle: (entry: TableEntry) => void
  readonly #columnsOf: ColumnsOf | undefined
  readonly #built = new Map<string, TableEntry>()

  /**
   * `settle` runs once an entry is kept (a view's state is resolved there, before anything
   * reads its plan); an entry it reaches again, through a view reading itself, is the kept one.
   */
  constructor(
    source: ReadonlyMap<string, CatalogTable>,
    build: (table: CatalogTable) => TableEntry,
    settle: (entry: TableEntry) => void = () => {},
    columnsOf?: ColumnsOf,
  ) {
    this.#source = source
    this.#build = build
    this.#settle = settle
    this.#columnsOf = columnsOf
  }

  get size(): number {
    return this.#source.size
  }

  has(name: string): boolean {
    return this.#source.has(name)
  }

  get(name: string): TableEntry | undefined {
    const built = this.#built.get(name)
    if (built) return built
    const table = this.#source.get(name)
    if (!table) return undefined
    const entry = this.#build(table)
    this.#built.set(name, entry)
    this.#settle(entry)
    return entry
  }

  keys(): Iterable<string> {
    return this.#source.keys()
  }

  /** Every table, in catalog order (builds the entries not built yet). */
  *values(): Generator<TableEntry> {
    for (const name of this.#source.keys()) yield this.get(name) as TableEntry
  }

  /**
   * Every table with the columns this session sees (null: hidden), in catalog order. Tables
   * not built yet are answered by `columnsOf` where it can tell (plain tables), so a catalog
   * listing of 10,000 tables binds no filter or mask; the others are built.
   */
  *visibility(): Generator<TableVisibility> {
    for (const [name, table] of this.#source) {
      const entry = this.#built.get(name)
      const light = entry ? undefined : this.#columnsOf?.(table)
      if (light !== undefined) yield { table, columns: light }
      else yield { table, columns: (entry ?? (this.get(name) as TableEntry)).plan?.columns ?? null }
    }
  }

  /** The entries built so far. */
  built(): Iterable<TableEntry> {
    return this.#built.values()
  }
}
