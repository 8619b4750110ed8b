import type { Catalog, CatalogTable } from '../catalog.types.js'
import { type ViewDefinition, viewDefinitionOf } from './view-definition.js'

/** One exposed schema of a catalog, under the name users see. */
export interface IndexedSchema {
  readonly upstream: string
  readonly visible: string
  readonly tables: ReadonlyMap<string, CatalogTable>
}

/**
 * What sessions need of one catalog whatever the user: its schemas and tables by name and the
 * static expansion of its views. Built once per catalog object and shared by every session
 * compiled from it (the store hands out one object per catalog version), so a login costs
 * nothing per exposed table: each session builds a table's scan plan when it first names it.
 */
export class CatalogIndex {
  /** Schemas by visible name, in catalog order (a later schema with the same name wins). */
  readonly visible: ReadonlyMap<string, IndexedSchema>
  /** Schemas by upstream name. */
  readonly #upstream: ReadonlyMap<string, IndexedSchema>
  /** The visible name of each upstream schema. */
  readonly #visibleOf: ReadonlyMap<string, string>
  readonly #definitions = new WeakMap<CatalogTable, ViewDefinition | null>()
  /** Visible name of the default schema (docs/admin-api.md#catalog-discovery). */
  readonly defaultSchema: string | undefined

  private constructor(catalog: Catalog) {
    const schemas = catalog.schemas.map(
      (s): IndexedSchema => ({
        upstream: s.name,
        visible: s.alias ? s.alias : s.name,
        tables: new Map(s.tables.map((t) => [t.name, t])),
      }),
    )
    this.visible = new Map(schemas.map((s) => [s.visible, s]))
    this.#upstream = new Map(schemas.map((s) => [s.upstream, s]))
    this.#visibleOf = new Map(schemas.map((s) => [s.upstream, s.visible]))
    const pub = schemas.find((s) => s.upstream === 'public')
    this.defaultSchema = pub ? pub.visible : schemas.map((s) => s.visible).sort()[0]
  }

  /** The index of a catalog, built on first use. */
  static of(catalog: Catalog): CatalogIndex {
    let index = indexes.get(catalog)
    if (!index) {
      index = new CatalogIndex(catalog)
      indexes.set(catalog, index)
    }
    return index
  }

  /** The schema with this upstream name. */
  schema(upstream: string): IndexedSchema | undefined {
    return this.#upstream.get(upstream)
  }

  /** An exposed table by its upstream names. */
  findTable(schema: string, table: string): CatalogTable | undefined {
    return this.#upstream.get(schema)?.tables.get(table)
  }

  /** How a view, materialized view or foreign table reads, before any user's policies. */
  viewDefinition(table: CatalogTable): ViewDefinition | undefined {
    if (table.kind === undefined || table.kind === 'TABLE') return undefined
    let definition = this.#definitions.get(table)
    if (definition === undefined) {
      definition =
        viewDefinitionOf(table, (schema, name) =>
          this.findTable(schema, name) ? this.#visibleOf.get(schema) : undefined,
        ) ?? null
      this.#definitions.set(table, definition)
    }
    return definition ?? undefined
  }
}

const indexes = new WeakMap<Catalog, CatalogIndex>()
