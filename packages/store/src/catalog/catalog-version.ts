import { eq, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { datasources } from '../tables.js'

/**
 * Marks the datasource's stored catalog, relationships or anchors as changed, in the caller's
 * transaction; session builders on every instance compare this number to reuse cached copies.
 * Returns the new version.
 */
export async function bumpCatalogVersion(tx: Db, datasourceId: string): Promise<number> {
  const [row] = await tx
    .update(datasources)
    .set({ catalogVersion: sql`${datasources.catalogVersion} + 1` })
    .where(eq(datasources.id, datasourceId))
    .returning({ version: datasources.catalogVersion })
  return row?.version ?? 0
}
