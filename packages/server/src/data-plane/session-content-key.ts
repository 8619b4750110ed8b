import { createHash } from 'node:crypto'
import type { Catalog, CatalogTable, SessionInput } from '@palisade/core'

/** Longest the digest of a catalog holds the thread before it lets other work run. */
const SLICE_MS = 5

/** Catalog digests by object: the store hands out one object per catalog version. */
const digests = new WeakMap<Catalog, Promise<string | undefined>>()
/**
 * Table digests by object: a catalog patched after a sync or a tag keeps its other table
 * objects (the store's session-catalog-patch.ts), so its digest hashes only what changed.
 */
const tableDigests = new WeakMap<CatalogTable, string>()

/**
 * A digest of the input's content without `epoch` (a counter of builds); undefined (no
 * sharing) when any value is not plain data, whose JSON could hide a difference (a Map writes
 * as `{}`). The catalog is digested once per object, in slices, so a catalog of 10,000 tables
 * neither costs every login nor holds the thread that serves every connection.
 */
export async function contentKey(input: SessionInput): Promise<string | undefined> {
  const { epoch: _epoch, catalog, ...content } = input
  const catalogKey = await catalogDigest(catalog)
  if (catalogKey === undefined) return undefined
  let json: string
  try {
    json = JSON.stringify(content, plainOnly)
  } catch {
    return undefined
  }
  return createHash('sha256').update(catalogKey).update('\u0000').update(json).digest('base64')
}

function catalogDigest(catalog: Catalog): Promise<string | undefined> {
  let digest = digests.get(catalog)
  if (!digest) {
    digest = digestInSlices(catalog)
    digests.set(catalog, digest)
  }
  return digest
}

async function digestInSlices(catalog: Catalog): Promise<string | undefined> {
  const hash = createHash('sha256')
  let sliceStart = performance.now()
  try {
    for (const schema of catalog.schemas) {
      // JSON text never holds a raw newline or NUL, so the separators keep parts apart.
      hash.update(JSON.stringify({ ...schema, tables: undefined }, plainOnly))
      for (const table of schema.tables) {
        hash.update('\n').update(tableDigest(table))
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          sliceStart = performance.now()
        }
      }
      hash.update('\u0000')
    }
  } catch {
    return undefined
  }
  return hash.digest('base64')
}

/** A table's digest; throws when it holds anything but plain data. */
function tableDigest(table: CatalogTable): string {
  let digest = tableDigests.get(table)
  if (digest === undefined) {
    digest = createHash('sha256').update(JSON.stringify(table, plainOnly)).digest('base64')
    tableDigests.set(table, digest)
  }
  return digest
}

/** A JSON replacer that refuses anything but strings, finite numbers, booleans, null, arrays and plain objects. */
function plainOnly(_key: string, value: unknown): unknown {
  if (value === undefined || value === null) return value
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number' && Number.isFinite(value)) return value
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value)
    if (Array.isArray(value) || prototype === Object.prototype || prototype === null) return value
  }
  throw new Error('not plain data')
}
