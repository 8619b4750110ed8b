import { and, asc, eq } from 'drizzle-orm'
import * as v from 'valibot'
import { bumpCatalogVersion } from '../catalog/catalog-version.js'
import { requireDatasource } from '../datasources/datasources-service.js'
import type { StoreContext } from '../kernel/context.js'
import { onUniqueViolation } from '../kernel/db.js'
import {
  ResourceConflictError,
  ResourceNotFoundError,
  StoreError,
  ValidationError,
} from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import { boundedString, parseBody, uuidString } from '../kernel/validation.js'
import { catalogColumns, columnAnchors, tableRelationships } from '../tables.js'
import {
  type Anchor,
  type AnchorRow,
  anchorSnapshot,
  type Relationship,
  type RelRow,
  relationshipSnapshot,
  tableInfo,
  toAnchor,
  toRelationship,
} from './relationship-rows.js'

export const relationshipSchema = v.object({
  child_table_id: uuidString,
  child_column_name: boundedString(1, 63),
  parent_table_id: uuidString,
  parent_column_name: boundedString(1, 63),
})
export const anchorSchema = v.object({
  child_table_id: uuidString,
  resolved_column_name: v.pipe(
    boundedString(1, 63),
    v.check((s) => s.trim() !== '', 'must not be blank'),
  ),
  relationship_id: v.nullish(uuidString),
  actual_column_name: v.nullish(v.string('expected a string')),
})

/** Table relationships and column anchors (docs/admin-api.md#relationships-anchors-and-their-checks). */
export class RelationshipsService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Relationships of a datasource, oldest first, optionally for one child table. */
  async list(
    datasourceId: string,
    filter: { child_table_id?: string } = {},
  ): Promise<Relationship[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const rows = await this.#ctx.db
      .select()
      .from(tableRelationships)
      .where(
        and(
          eq(tableRelationships.datasourceId, datasourceId),
          filter.child_table_id
            ? eq(tableRelationships.childTableId, filter.child_table_id)
            : undefined,
        ),
      )
      .orderBy(asc(tableRelationships.createdAt), asc(tableRelationships.id))
    return Promise.all(rows.map((r) => toRelationship(this.#ctx.db, r)))
  }

  /** Creates a relationship: 404 datasource; 422; 404 tables; 422 same table or missing column; 409. */
  async create(
    datasourceId: string,
    input: {
      child_table_id: string
      child_column_name: string
      parent_table_id: string
      parent_column_name: string
    },
    actorId: string,
  ): Promise<Relationship> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId)
      const body = parseBody(relationshipSchema, input)
      for (const field of ['child_table_id', 'parent_table_id'] as const) {
        const t = await tableInfo(m.tx, body[field])
        if (!t || t.ds !== datasourceId) throw new ResourceNotFoundError('table', field)
      }
      if (body.child_table_id === body.parent_table_id) {
        throw new ValidationError([
          {
            field: 'parent_table_id',
            code: 'not_allowed',
            message: 'child and parent are the same table',
          },
        ])
      }
      const details = []
      for (const side of ['child', 'parent'] as const) {
        const [col] = await m.tx
          .select({ id: catalogColumns.id })
          .from(catalogColumns)
          .where(
            and(
              eq(catalogColumns.tableId, body[`${side}_table_id`]),
              eq(catalogColumns.columnName, body[`${side}_column_name`]),
            ),
          )
        if (!col)
          details.push({
            field: `${side}_column_name`,
            code: 'not_found',
            message: 'column not in the stored catalog',
          })
      }
      if (details.length > 0) throw new ValidationError(details)
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(tableRelationships)
            .values({
              id: uuidv7(),
              datasourceId,
              childTableId: body.child_table_id,
              childColumnName: body.child_column_name,
              parentTableId: body.parent_table_id,
              parentColumnName: body.parent_column_name,
              createdBy: actorId,
              createdAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('relationship already exists'),
      )
      const rel = row as RelRow
      m.audit('table_relationship', rel.id, 'create', {
        after: await relationshipSnapshot(m.tx, rel),
      })
      await bumpCatalogVersion(m.tx, datasourceId)
      m.invalidate({ type: 'ds', datasourceId })
      return toRelationship(m.tx, rel)
    })
  }

  /** Deletes a relationship; 404 if not on this datasource; 409 in_use while an anchor uses it. */
  async delete(datasourceId: string, relationshipId: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const [row] = await m.tx
        .select()
        .from(tableRelationships)
        .where(
          and(
            eq(tableRelationships.id, relationshipId),
            eq(tableRelationships.datasourceId, datasourceId),
          ),
        )
      if (!row) throw new ResourceNotFoundError('relationship')
      const [used] = await m.tx
        .select({ id: columnAnchors.id })
        .from(columnAnchors)
        .where(eq(columnAnchors.relationshipId, relationshipId))
      if (used) throw new StoreError('in_use', 'an anchor uses this relationship')
      m.audit('table_relationship', row.id, 'delete', {
        before: await relationshipSnapshot(m.tx, row),
      })
      await m.tx.delete(tableRelationships).where(eq(tableRelationships.id, relationshipId))
      await bumpCatalogVersion(m.tx, datasourceId)
      m.invalidate({ type: 'ds', datasourceId })
    })
  }

  /** Anchors of a datasource, oldest first. */
  async listAnchors(datasourceId: string): Promise<Anchor[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const rows = await this.#ctx.db
      .select()
      .from(columnAnchors)
      .where(eq(columnAnchors.datasourceId, datasourceId))
      .orderBy(asc(columnAnchors.createdAt), asc(columnAnchors.id))
    return Promise.all(rows.map((a) => toAnchor(this.#ctx.db, a)))
  }

  /** Creates an anchor: 404; 422 (both or neither alternative); 404 table/relationship; 422 mismatch; 409. */
  async createAnchor(
    datasourceId: string,
    input: {
      child_table_id: string
      resolved_column_name: string
      relationship_id?: string | null
      actual_column_name?: string | null
    },
    actorId: string,
  ): Promise<Anchor> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId)
      const body = parseBody(anchorSchema, input)
      const actual = body.actual_column_name?.trim() || null
      const relId = body.relationship_id ?? null
      if ((actual === null) === (relId === null)) {
        throw new ValidationError([
          {
            field: 'relationship_id',
            code: 'not_allowed',
            message: 'give exactly one of relationship_id and actual_column_name',
          },
        ])
      }
      if (actual !== null && actual.length > 63) {
        throw new ValidationError([
          {
            field: 'actual_column_name',
            code: 'too_long',
            message: 'must be at most 63 characters',
          },
        ])
      }
      const table = await tableInfo(m.tx, body.child_table_id)
      if (!table || table.ds !== datasourceId)
        throw new ResourceNotFoundError('table', 'child_table_id')
      if (relId) {
        const [rel] = await m.tx
          .select()
          .from(tableRelationships)
          .where(
            and(
              eq(tableRelationships.id, relId),
              eq(tableRelationships.datasourceId, datasourceId),
            ),
          )
        if (!rel) throw new ResourceNotFoundError('relationship', 'relationship_id')
        if (rel.childTableId !== body.child_table_id) {
          throw new ValidationError([
            {
              field: 'relationship_id',
              code: 'not_allowed',
              message: 'the relationship starts at another table',
            },
          ])
        }
      }
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(columnAnchors)
            .values({
              id: uuidv7(),
              datasourceId,
              childTableId: body.child_table_id,
              resolvedColumnName: body.resolved_column_name,
              relationshipId: relId,
              actualColumnName: actual,
              createdBy: actorId,
              createdAt: m.now,
            })
            .returning(),
        () =>
          new ResourceConflictError(
            'an anchor for this column already exists',
            'resolved_column_name',
          ),
      )
      const anchor = row as AnchorRow
      m.audit('column_anchor', anchor.id, 'create', { after: await anchorSnapshot(m.tx, anchor) })
      await bumpCatalogVersion(m.tx, datasourceId)
      m.invalidate({ type: 'ds', datasourceId })
      return toAnchor(m.tx, anchor)
    })
  }

  /** Deletes an anchor; 404 if not on this datasource. */
  async deleteAnchor(datasourceId: string, anchorId: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const [row] = await m.tx
        .select()
        .from(columnAnchors)
        .where(and(eq(columnAnchors.id, anchorId), eq(columnAnchors.datasourceId, datasourceId)))
      if (!row) throw new ResourceNotFoundError('anchor')
      m.audit('column_anchor', row.id, 'delete', { before: await anchorSnapshot(m.tx, row) })
      await m.tx.delete(columnAnchors).where(eq(columnAnchors.id, anchorId))
      await bumpCatalogVersion(m.tx, datasourceId)
      m.invalidate({ type: 'ds', datasourceId })
    })
  }
}
