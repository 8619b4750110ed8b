import { and, asc, eq } from 'drizzle-orm'
import * as v from 'valibot'
import { requireDatasource } from '../datasources/datasources-service.js'
import { iso, isoNow, type StoreContext, sortedUnique } from '../kernel/context.js'
import { ensureParser } from '../kernel/core-bridge.js'
import type { Db } from '../kernel/db.js'
import { ResourceNotFoundError, StoreError, ValidationError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { boundedString, parseBody } from '../kernel/validation.js'
import { catalogColumns, catalogSchemas, catalogTables, catalogTagProposals } from '../tables.js'
import { loadTags, replaceTags, type TaggedObject, tagKey } from './catalog-tags.js'
import { bumpCatalogVersion } from './catalog-version.js'

/** The tags of one catalog object (`column_name` null: the table's own). */
export interface ObjectTags {
  schema_name: string
  table_name: string
  column_name: string | null
  tags: string[]
}

/** A tag classification proposed for a column (docs/policies.md, "Classification"). */
export interface TagProposal {
  id: string
  datasource_id: string
  schema_name: string
  table_name: string
  column_name: string
  tag: string
  confidence: number
  evidence: string
  status: 'pending' | 'accepted' | 'rejected'
  decided_by: string | null
  decided_at: string | null
  created_at: string
}

/** What a classifier found for one column, before it is stored. */
export interface ClassifiedColumn {
  schema_name: string
  table_name: string
  column_name: string
  tag: string
  confidence: number
  evidence: string
}

const tag = v.pipe(v.string('expected a string'), v.maxLength(100, 'at most 100 characters'))

/** 422 for any tag outside core's tag grammar (`pii.email`). */
async function checkTagGrammar(tags: readonly string[]): Promise<void> {
  const core = await ensureParser()
  const details = tags.flatMap((t, i) =>
    core.TAG_PATTERN.test(t)
      ? []
      : [
          {
            field: `tags[${i}]`,
            code: 'pattern',
            message: 'a tag is dot-separated lowercase words, like pii.email',
          },
        ],
  )
  if (details.length > 0) throw new ValidationError(details)
}

const setSchema = v.object({
  schema_name: boundedString(1, 128),
  table_name: boundedString(1, 128),
  column_name: v.nullish(boundedString(1, 128)),
  tags: v.pipe(v.array(tag, 'expected an array of tags'), v.maxLength(50, 'at most 50 tags')),
})

/** 404 unless the object is in the datasource's stored catalog. */
async function requireObject(db: Db, datasourceId: string, o: TaggedObject): Promise<void> {
  const base = db
    .select({ id: catalogTables.id })
    .from(catalogTables)
    .innerJoin(catalogSchemas, eq(catalogSchemas.id, catalogTables.schemaId))
  const tableWhere = and(
    eq(catalogTables.datasourceId, datasourceId),
    eq(catalogSchemas.schemaName, o.schema),
    eq(catalogTables.tableName, o.table),
  )
  const rows =
    o.column === null
      ? await base.where(tableWhere)
      : await base
          .innerJoin(catalogColumns, eq(catalogColumns.tableId, catalogTables.id))
          .where(and(tableWhere, eq(catalogColumns.columnName, o.column)))
  if (rows.length === 0) {
    throw new ResourceNotFoundError(o.column === null ? 'catalog table' : 'catalog column')
  }
}

function toProposal(r: typeof catalogTagProposals.$inferSelect): TagProposal {
  return {
    id: r.id,
    datasource_id: r.datasourceId,
    schema_name: r.schemaName,
    table_name: r.tableName,
    column_name: r.columnName,
    tag: r.tag,
    confidence: Math.round(r.confidence * 100) / 100,
    evidence: r.evidence,
    status: r.status as TagProposal['status'],
    decided_by: r.decidedBy,
    decided_at: iso(r.decidedAt),
    created_at: isoNow(r.createdAt),
  }
}

/** Sets tags and announces the catalog change (sessions re-expand tag targets). */
async function writeTags(
  m: Mutation,
  datasourceId: string,
  object: TaggedObject,
  tags: string[],
): Promise<boolean> {
  const before = await replaceTags(m.tx, datasourceId, object, tags, m.actorId, m.now)
  if (JSON.stringify(before) === JSON.stringify(tags)) return false
  m.audit('catalog_tag', datasourceId, 'update', {
    schema_name: object.schema,
    table_name: object.table,
    column_name: object.column,
    before,
    after: tags,
  })
  const version = await bumpCatalogVersion(m.tx, datasourceId)
  const relations = [{ schema: object.schema, table: object.table }]
  m.invalidate({ type: 'ds', datasourceId, catalogEdit: { version, relations } })
  return true
}

/** Tags on catalog objects and the classifier's proposals (docs/policies.md, "Tags"). */
export class CatalogTagsService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Every tagged object, by schema, table and column; `tag` keeps those under one tag. */
  async list(
    datasourceId: string,
    filter: { tag?: string | undefined } = {},
  ): Promise<ObjectTags[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const out: ObjectTags[] = []
    for (const [key, tags] of await loadTags(this.#ctx.db, datasourceId)) {
      const [schema, table, column] = key.split('\u0000') as [string, string, string]
      const kept = filter.tag
        ? tags.filter((t) => t === filter.tag || t.startsWith(`${filter.tag}.`))
        : tags
      if (kept.length === 0) continue
      out.push({ schema_name: schema, table_name: table, column_name: column || null, tags: kept })
    }
    return out.sort((a, b) =>
      `${a.schema_name}.${a.table_name}.${a.column_name ?? ''}` <
      `${b.schema_name}.${b.table_name}.${b.column_name ?? ''}`
        ? -1
        : 1,
    )
  }

  /**
   * Replaces one table's or column's tags (`[]` removes them all); audited as catalog_tag/update
   * with before and after. Open sessions see the change at their next statement.
   */
  async set(
    datasourceId: string,
    input: { schema_name: string; table_name: string; column_name?: string | null; tags: string[] },
    actorId: string,
  ): Promise<ObjectTags> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const body = parseBody(setSchema, input)
      await checkTagGrammar(body.tags)
      const object = {
        schema: body.schema_name,
        table: body.table_name,
        column: body.column_name ?? null,
      }
      await requireObject(m.tx, datasourceId, object)
      const tags = sortedUnique(body.tags)
      if (!(await writeTags(m, datasourceId, object, tags))) m.noop()
      return {
        schema_name: object.schema,
        table_name: object.table,
        column_name: object.column,
        tags,
      }
    })
  }

  /** Adds tags to one object (those it has stay); the same audit and effect as `set`. */
  async add(
    datasourceId: string,
    input: { schema_name: string; table_name: string; column_name?: string | null; tags: string[] },
    actorId: string,
  ): Promise<ObjectTags> {
    const current = await this.#tagsOf(datasourceId, input)
    return this.set(datasourceId, { ...input, tags: [...current, ...(input.tags ?? [])] }, actorId)
  }

  /** Removes tags from one object; 404 when it carries none of them. */
  async remove(
    datasourceId: string,
    input: { schema_name: string; table_name: string; column_name?: string | null; tags: string[] },
    actorId: string,
  ): Promise<ObjectTags> {
    const current = await this.#tagsOf(datasourceId, input)
    if (!input.tags.some((t) => current.includes(t))) throw new ResourceNotFoundError('tag')
    return this.set(
      datasourceId,
      { ...input, tags: current.filter((t) => !input.tags.includes(t)) },
      actorId,
    )
  }

  async #tagsOf(
    datasourceId: string,
    o: { schema_name: string; table_name: string; column_name?: string | null },
  ): Promise<string[]> {
    const all = await loadTags(this.#ctx.db, datasourceId)
    return all.get(tagKey(o.schema_name, o.table_name, o.column_name ?? null)) ?? []
  }

  /** Proposals, newest first; `status` keeps one state (`pending` by default). */
  async proposals(
    datasourceId: string,
    filter: { status?: string | undefined } = {},
  ): Promise<TagProposal[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const status = filter.status ?? 'pending'
    if (!['pending', 'accepted', 'rejected', 'all'].includes(status)) {
      throw new StoreError('invalid_parameter', 'status is not a proposal status', [
        {
          field: 'status',
          code: 'invalid_enum',
          message: 'expected pending, accepted, rejected or all',
        },
      ])
    }
    const rows = await this.#ctx.db
      .select()
      .from(catalogTagProposals)
      .where(
        and(
          eq(catalogTagProposals.datasourceId, datasourceId),
          status === 'all' ? undefined : eq(catalogTagProposals.status, status),
        ),
      )
      .orderBy(
        asc(catalogTagProposals.schemaName),
        asc(catalogTagProposals.tableName),
        asc(catalogTagProposals.columnName),
        asc(catalogTagProposals.tag),
      )
    return rows.map(toProposal)
  }

  /**
   * Stores what a classification found: new proposals only (a column already carrying the tag,
   * or a proposal already made, accepted or rejected, is not proposed again). Returns the new ones.
   */
  async propose(
    datasourceId: string,
    found: readonly ClassifiedColumn[],
    actorId: string,
  ): Promise<TagProposal[]> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const existing = await loadTags(m.tx, datasourceId)
      const fresh = found.filter(
        (f) =>
          !(existing.get(tagKey(f.schema_name, f.table_name, f.column_name)) ?? []).includes(f.tag),
      )
      if (fresh.length === 0) {
        m.noop()
        return []
      }
      const inserted = await m.tx
        .insert(catalogTagProposals)
        .values(
          fresh.map((f) => ({
            id: uuidv7(),
            datasourceId,
            schemaName: f.schema_name,
            tableName: f.table_name,
            columnName: f.column_name,
            tag: f.tag,
            confidence: f.confidence,
            evidence: f.evidence,
            createdAt: m.now,
          })),
        )
        .onConflictDoNothing()
        .returning()
      if (inserted.length === 0) {
        m.noop()
        return []
      }
      m.audit('catalog_tag', datasourceId, 'propose', {
        proposals: inserted.map((p) => ({
          schema_name: p.schemaName,
          table_name: p.tableName,
          column_name: p.columnName,
          tag: p.tag,
          confidence: Math.round(p.confidence * 100) / 100,
          evidence: p.evidence,
        })),
      })
      return inserted.map(toProposal)
    })
  }

  /** Accepts (the column gets the tag) or rejects a pending proposal; 409 once decided. */
  async decide(
    datasourceId: string,
    proposalId: string,
    verdict: 'accept' | 'reject',
    actorId: string,
  ): Promise<TagProposal> {
    return this.#ctx.mutate(actorId, async (m) => {
      const [row] = await m.tx
        .select()
        .from(catalogTagProposals)
        .where(
          and(
            eq(catalogTagProposals.id, proposalId),
            eq(catalogTagProposals.datasourceId, datasourceId),
          ),
        )
        .for('update')
      if (!row) throw new ResourceNotFoundError('tag proposal')
      if (row.status !== 'pending') {
        throw new StoreError('not_pending', `the proposal is already ${row.status}`)
      }
      const [updated] = await m.tx
        .update(catalogTagProposals)
        .set({
          status: verdict === 'accept' ? 'accepted' : 'rejected',
          decidedBy: actorId,
          decidedAt: m.now,
        })
        .where(eq(catalogTagProposals.id, proposalId))
        .returning()
      m.audit('catalog_tag', datasourceId, verdict, {
        proposal_id: proposalId,
        schema_name: row.schemaName,
        table_name: row.tableName,
        column_name: row.columnName,
        tag: row.tag,
      })
      if (verdict === 'accept') {
        const object = { schema: row.schemaName, table: row.tableName, column: row.columnName }
        const current = (await loadTags(m.tx, datasourceId)).get(
          tagKey(row.schemaName, row.tableName, row.columnName),
        )
        await writeTags(m, datasourceId, object, sortedUnique([...(current ?? []), row.tag]))
      }
      return toProposal(updated as typeof row)
    })
  }
}
