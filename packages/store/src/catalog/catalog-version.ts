import { eq, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { datasources } from '../tables.js'

/**
 * Marks the datasource's stored catalog, relationships or anchors as changed, in the caller's
 * transaction; session builders on every instance compare this number to reuse cached copies.
 */
export async function bumpCatalogVersion(tx: Db, datasourceId: string): Promise<void> {
  await tx
    .update(datasources)
    .set({ catalogVersion: sql`${datasources.catalogVersion} + 1` })
    .where(eq(datasources.id, datasourceId))
}
