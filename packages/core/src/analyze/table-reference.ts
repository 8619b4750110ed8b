import type { AstNode } from '../ast/node.js'
import type { TableEntry } from '../session/compiled-session.js'
import type { VirtualInformationSchemaView } from '../virtual-catalog/information-schema.js'

/** What a `RangeVar` in a query refers to, decided once by the analyzer. */
export type TableReference =
  | {
      readonly kind: 'table'
      readonly entry: TableEntry
      /** The name as the user wrote it, for `relation "..." does not exist`. */
      readonly written: string
    }
  | {
      /** An expanded view: its definition (shared, never mutated) replaces the scan. */
      readonly kind: 'view'
      readonly entry: TableEntry
      readonly body: AstNode
      readonly written: string
    }
  | { readonly kind: 'cte'; readonly name: string; readonly rename: string | undefined }
  | { readonly kind: 'information_schema'; readonly view: VirtualInformationSchemaView }
  /** A relation of the virtual `pg_catalog` (virtual-catalog/pg-catalog-templates.ts). */
  | { readonly kind: 'pg_catalog'; readonly relation: string }
