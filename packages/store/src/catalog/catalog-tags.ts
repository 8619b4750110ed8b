import type { Catalog } from '@palisade/core'
import { and, eq, inArray, or, type SQL } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { catalogTagProposals, catalogTags } from '../tables.js'

/** One tagged object by upstream names; `column` is null for a table. */
export interface TaggedObject {
  schema: string
  table: string
  column: string | null
}

/** The key of one object in `loadTags`' map. */
export const tagKey = (schema: string, table: string, column: string | null) =>
  `${schema}\u0000${table}\u0000${column ?? ''}`

/** Every tag of a datasource, by object. */
export async function loadTags(db: Db, datasourceId: string): Promise<Map<string, string[]>> {
  const rows = await db
    .select()
    .from(catalogTags)
    .where(eq(catalogTags.datasourceId, datasourceId))
    .orderBy(catalogTags.tag)
  const out = new Map<string, string[]>()
  for (const r of rows) {
    const key = tagKey(r.schemaName, r.tableName, r.columnName || null)
    out.set(key, [...(out.get(key) ?? []), r.tag])
  }
  return out
}

/** The catalog with each table and column carrying its tags (untagged objects unchanged). */
export async function withTags(db: Db, datasourceId: string, catalog: Catalog): Promise<Catalog> {
  const tags = await loadTags(db, datasourceId)
  if (tags.size === 0) return catalog
  return {
    schemas: catalog.schemas.map((s) => ({
      ...s,
      tables: s.tables.map((t) => {
        const own = tags.get(tagKey(s.name, t.name, null))
        return {
          ...t,
          ...(own ? { tags: own } : {}),
          columns: t.columns.map((c) => {
            const columnTags = tags.get(tagKey(s.name, t.name, c.name))
            return columnTags ? { ...c, tags: columnTags } : c
          }),
        }
      }),
    })),
  }
}

/**
 * Removes the tags and proposals of columns that no longer exist (a sync found them dropped
 * upstream); returns the removed tags as `schema.table.column: tag`, sorted.
 */
export async function dropColumnTags(
  db: Db,
  datasourceId: string,
  columns: readonly TaggedObject[],
): Promise<string[]> {
  if (columns.length === 0) return []
  const match = (t: typeof catalogTags | typeof catalogTagProposals): SQL | undefined =>
    or(
      ...columns.map((c) =>
        and(eq(t.schemaName, c.schema), eq(t.tableName, c.table), eq(t.columnName, c.column ?? '')),
      ),
    )
  const removed = await db
    .delete(catalogTags)
    .where(and(eq(catalogTags.datasourceId, datasourceId), match(catalogTags)))
    .returning()
  await db
    .delete(catalogTagProposals)
    .where(and(eq(catalogTagProposals.datasourceId, datasourceId), match(catalogTagProposals)))
  return removed.map((r) => `${r.schemaName}.${r.tableName}.${r.columnName}: ${r.tag}`).sort()
}

/** Replaces one object's tags; returns the tags it had. */
export async function replaceTags(
  db: Db,
  datasourceId: string,
  object: TaggedObject,
  tags: readonly string[],
  actorId: string | null,
  now: Date,
): Promise<string[]> {
  const where = and(
    eq(catalogTags.datasourceId, datasourceId),
    eq(catalogTags.schemaName, object.schema),
    eq(catalogTags.tableName, object.table),
    eq(catalogTags.columnName, object.column ?? ''),
  )
  const before = (await db.select({ tag: catalogTags.tag }).from(catalogTags).where(where))
    .map((r) => r.tag)
    .sort()
  const gone = before.filter((t) => !tags.includes(t))
  if (gone.length > 0)
    await db.delete(catalogTags).where(and(where, inArray(catalogTags.tag, gone)))
  const added = tags.filter((t) => !before.includes(t))
  if (added.length > 0) {
    await db.insert(catalogTags).values(
      added.map((tag) => ({
        datasourceId,
        schemaName: object.schema,
        tableName: object.table,
        columnName: object.column ?? '',
        tag,
        createdBy: actorId,
        createdAt: now,
      })),
    )
  }
  return before
}
