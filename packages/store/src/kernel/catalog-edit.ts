/** One relation of a catalog by its upstream names. */
export interface EditedRelation {
  schema: string
  table: string
}

/**
 * What one committed catalog change touched, carried by its local change event so that session
 * builders in this process can patch the session catalog they keep instead of reading it whole
 * (session-catalog-patch.ts). A change without one is read whole: this is only ever a shortcut.
 */
export interface CatalogEdit {
  /** The catalog version the change committed. */
  version: number
  /** Every relation whose table row, columns or tags the change may have written. */
  relations: readonly EditedRelation[]
}
