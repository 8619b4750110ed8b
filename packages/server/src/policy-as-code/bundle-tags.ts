import type { ScopedStore } from '@palisade/store'
import { storeStepAt } from '../http/api-error.js'
import type { BundleObjectTags } from './bundle-export.js'

/**
 * Catalog tags in policy bundles (docs/policy-as-code.md): a datasource's tagged tables and
 * columns. Apply makes the stored tags match; an object its catalog does not hold yet (a
 * datasource the bundle just created, before discovery) is left for a later apply.
 */

const keyOf = (o: { schema: string; table: string; column: string | null }) =>
  `${o.schema}\u0000${o.table}\u0000${o.column ?? ''}`

/** A hand-written `tags` list, canonical (sorted, deduplicated, empty entries dropped). */
export function normalizeObjectTags(input: unknown): BundleObjectTags[] | undefined {
  if (!Array.isArray(input)) return undefined
  const out = (input as Partial<BundleObjectTags>[])
    .map((o) => ({
      schema: String(o.schema ?? 'public'),
      table: String(o.table ?? ''),
      column: o.column ?? null,
      tags: [...new Set(o.tags ?? [])].sort(),
    }))
    .filter((o) => o.tags.length > 0)
    .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))
  return out.length > 0 ? out : undefined
}

export interface TagApply {
  store: Pick<ScopedStore, 'catalogTags' | 'catalog'>
  datasourceId: string
  datasourceName: string
  want: readonly BundleObjectTags[] | undefined
  where: string
  actorId: string
  note(step: { action: 'update'; kind: 'catalog_tag'; name: string; fields: string[] }): void
}

/** Sets every listed object's tags and clears the tags of objects the bundle does not list. */
export async function applyTags(a: TagApply): Promise<void> {
  const have = new Map(
    (await a.store.catalogTags.list(a.datasourceId)).map((o) => [
      keyOf({ schema: o.schema_name, table: o.table_name, column: o.column_name }),
      o,
    ]),
  )
  const known = new Set<string>()
  for (const s of (await a.store.catalog.get(a.datasourceId)).schemas) {
    for (const t of s.tables) {
      known.add(keyOf({ schema: s.schema_name, table: t.table_name, column: null }))
      for (const c of t.columns) {
        known.add(keyOf({ schema: s.schema_name, table: t.table_name, column: c.column_name }))
      }
    }
  }
  const wanted = new Map((a.want ?? []).map((o) => [keyOf(o), o]))
  const targets = new Set([...wanted.keys(), ...have.keys()])
  for (const key of [...targets].sort()) {
    const want = wanted.get(key)
    const tags = want?.tags ?? []
    if (JSON.stringify(have.get(key)?.tags ?? []) === JSON.stringify(tags)) continue
    if (!known.has(key)) continue
    const [schema, table, column] = key.split('\u0000') as [string, string, string]
    await storeStepAt(`${a.where}.tags`, () =>
      a.store.catalogTags.set(
        a.datasourceId,
        { schema_name: schema, table_name: table, column_name: column || null, tags },
        a.actorId,
      ),
    )
    a.note({
      action: 'update',
      kind: 'catalog_tag',
      name: `${a.datasourceName}: ${[schema, table, column].filter(Boolean).join('.')}`,
      fields: ['tags'],
    })
  }
}
