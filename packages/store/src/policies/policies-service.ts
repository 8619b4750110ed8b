import type { PolicyTarget, PolicyType } from '@palisade/core'
import { and, asc, count, eq, ilike, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { diffFields, isoNow, type StoreContext } from '../kernel/context.js'
import { ensureParser } from '../kernel/core-bridge.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import {
  ResourceConflictError,
  ResourceNotFoundError,
  StoreError,
  ValidationError,
} from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import {
  boundedString,
  isPlainObject,
  parseBody,
  policyName,
  uuidString,
} from '../kernel/validation.js'
import {
  attributeDefinitions,
  catalogColumns,
  catalogSchemas,
  catalogTables,
  catalogTags,
  decisionFunctions,
  policies,
  policyAssignments,
  policyVersions,
} from '../schema/index.js'
import { removeAssignments } from './assignment-cascade.js'
import { type Assignment, listAssignments } from './assignments-service.js'
import { versionConflict } from './decision-functions-service.js'

/** A policy as the admin API returns it (docs/resources.md#policies). */
export interface Policy {
  id: string
  name: string
  description: string | null
  policy_type: PolicyType
  targets: PolicyTarget[]
  filter_expression: string | null
  mask_expression: string | null
  decision_function_id: string | null
  decision_function: {
    id: string
    name: string
    is_enabled: boolean
    evaluate_context: string
  } | null
  is_enabled: boolean
  /** `enforce`, or `shadow`: evaluated and audited, never applied. */
  enforcement: PolicyEnforcement
  version: number
  assignment_count: number
  created_by: string | null
  updated_by: string | null
  created_at: string
  updated_at: string
  assignments?: Assignment[]
}

/** How a policy acts: applied, or only evaluated and audited (docs/policies.md, "Shadow mode"). */
export const POLICY_ENFORCEMENTS = ['enforce', 'shadow'] as const
export type PolicyEnforcement = (typeof POLICY_ENFORCEMENTS)[number]

/** Body of `POST /policies` (docs/resources.md#policies). */
export interface CreatePolicyInput {
  name: string
  policy_type: string
  targets: { schemas: string[]; tables: string[]; columns?: string[] | null }[]
  description?: string | null
  filter_expression?: string | null
  mask_expression?: string | null
  decision_function_id?: string | null
  is_enabled?: boolean | null
  enforcement?: PolicyEnforcement | null
  definition?: { filter_expression?: string | null; mask_expression?: string | null } | null
}

/** Body of `PUT /policies/{id}`: `version` plus any create field. */
export type UpdatePolicyInput = Partial<CreatePolicyInput> & { version: number }

/** The five policy kinds (docs/policies.md#each-type-with-an-example); the admin API validates with the same list. */
export const POLICY_TYPES = [
  'row_filter',
  'column_mask',
  'column_allow',
  'column_deny',
  'table_deny',
] as const
const pattern = v.pipe(
  boundedString(1, 128),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is exactly "no control characters"
  v.regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters'),
)
const patterns = v.pipe(
  v.array(pattern, 'expected an array of patterns'),
  v.minLength(1, 'at least one pattern'),
  v.maxLength(100, 'at most 100 patterns'),
)
/** One policy target (docs/resources.md#policies); shared with the admin API's request schemas. */
export const policyTargetSchema = v.object({
  // Required unless the target names tags; core's shape check says which (docs/policies.md).
  schemas: v.optional(patterns),
  tables: v.optional(patterns),
  columns: v.nullish(
    v.pipe(
      v.array(pattern, 'expected an array of patterns'),
      v.maxLength(100, 'at most 100 patterns'),
    ),
  ),
  tags: v.nullish(
    v.pipe(
      v.array(v.pipe(v.string('expected a string'), v.maxLength(100, 'at most 100 characters'))),
      v.maxLength(20, 'at most 20 tags'),
    ),
  ),
})
const expression = v.nullish(boundedString(0, 10_000))
const fields = {
  name: policyName,
  policy_type: v.picklist(POLICY_TYPES, 'unknown policy_type'),
  targets: v.pipe(
    v.array(policyTargetSchema, 'expected an array'),
    v.minLength(1, 'at least one target'),
    v.maxLength(50, 'at most 50 targets'),
  ),
  description: v.nullish(boundedString(0, 1000)),
  filter_expression: expression,
  mask_expression: expression,
  decision_function_id: v.nullish(uuidString),
  is_enabled: v.nullish(v.boolean('expected a boolean')),
  enforcement: v.nullish(v.picklist(POLICY_ENFORCEMENTS, 'expected enforce or shadow')),
  definition: v.nullish(v.object({ filter_expression: expression, mask_expression: expression })),
}
const createSchema = v.object(fields)
const updateSchema = v.object({
  ...v.partial(v.object(fields)).entries,
  version: v.pipe(v.number('expected an integer'), v.integer('expected an integer')),
})

type Row = typeof policies.$inferSelect
type Body = v.InferOutput<typeof createSchema>

/** Applies the `definition` alternative form (docs/resources.md#policies): used only where top level is absent. */
function liftDefinition(body: Partial<Body>, raw: unknown): Partial<Body> {
  const def = body.definition
  if (!def) return body
  const out = { ...body }
  const top = isPlainObject(raw) ? raw : {}
  for (const key of ['filter_expression', 'mask_expression'] as const) {
    if (def[key] === undefined) continue
    if (top[key] === undefined) out[key] = def[key]
    else if (top[key] !== def[key]) {
      throw new ValidationError([
        { field: `definition.${key}`, code: 'not_allowed', message: `differs from ${key}` },
      ])
    }
  }
  return out
}

/** Shape checks, then expression parsing, through core (docs/resources.md#policies). */
async function checkShape(
  db: Db,
  p: {
    policyType: PolicyType
    targets: PolicyTarget[]
    filterExpression: string | null
    maskExpression: string | null
  },
): Promise<void> {
  const core = await ensureParser()
  const result = core.validatePolicy({
    policyType: p.policyType,
    targets: p.targets,
    filterExpression: p.filterExpression,
    maskExpression: p.maskExpression,
  })
  if (!result.ok) {
    throw new StoreError(
      result.error,
      result.error === 'invalid_expression' ? 'expression is invalid' : 'request body is invalid',
      result.details,
    )
  }
  if (p.maskExpression) await checkMaskTypes(db, p.targets, p.maskExpression)
}

/**
 * A library mask must produce a value its columns can carry: every catalogued column the targets
 * match, on any datasource, is checked (a column catalogued later is checked when bound, and a
 * mismatch then fails closed).
 */
async function checkMaskTypes(db: Db, targets: PolicyTarget[], maskExpression: string) {
  const core = await ensureParser()
  const parsed = core.validateExpression(maskExpression, { isMask: true })
  if (!parsed.valid || parsed.masks.length === 0) return
  const columns = await db
    .select({
      ds: catalogTables.datasourceId,
      schema: catalogSchemas.schemaName,
      table: catalogTables.tableName,
      column: catalogColumns.columnName,
      type: catalogColumns.dataType,
    })
    .from(catalogColumns)
    .innerJoin(catalogTables, eq(catalogTables.id, catalogColumns.tableId))
    .innerJoin(catalogSchemas, eq(catalogSchemas.id, catalogTables.schemaId))
  const tagged = targets.some((t) => t.tags && t.tags.length > 0)
  const tags = new Map<string, string[]>()
  for (const r of tagged ? await db.select().from(catalogTags) : []) {
    const key = [r.datasourceId, r.schemaName, r.tableName, r.columnName].join('\u0000')
    tags.set(key, [...(tags.get(key) ?? []), r.tag])
  }
  const matches = (patterns: readonly string[] | null | undefined, value: string) =>
    (patterns ?? []).some((pattern) => core.matchesPattern(pattern, value))
  for (const c of columns) {
    const columnTags = tags.get([c.ds, c.schema, c.table, c.column].join('\u0000'))
    if (
      !targets.some((t) =>
        t.tags && t.tags.length > 0
          ? core.tagTargetCoversColumn(
              core.withTargetDefaults('column_mask', t),
              c.schema,
              c.table,
              {
                name: c.column,
                ...(columnTags ? { tags: columnTags } : {}),
              },
            )
          : matches(t.schemas, c.schema) &&
            matches(t.tables, c.table) &&
            matches(t.columns, c.column),
      )
    )
      continue
    const problem = core.maskTypeProblem(parsed.masks, c.type)
    if (problem) {
      throw new StoreError('invalid_expression', 'expression is invalid', [
        {
          field: 'mask_expression',
          code: 'parse_error',
          message: `${problem} (${c.schema}.${c.table}.${c.column})`,
        },
      ])
    }
  }
}

async function checkDecisionFunction(db: Db, id: string | null | undefined) {
  if (!id) return
  const [row] = await db
    .select({ id: decisionFunctions.id })
    .from(decisionFunctions)
    .where(eq(decisionFunctions.id, id))
  if (!row) {
    throw new ValidationError([
      { field: 'decision_function_id', code: 'not_found', message: 'decision function not found' },
    ])
  }
}

/** Every stored field, as the create audit and version snapshots record it. */
function snapshot(r: Row) {
  return {
    name: r.name,
    description: r.description,
    policy_type: r.policyType,
    targets: r.targets,
    filter_expression: r.filterExpression,
    mask_expression: r.maskExpression,
    decision_function_id: r.decisionFunctionId,
    is_enabled: r.isEnabled,
    enforcement: r.enforcement,
    version: r.version,
  }
}

/** Policies with optimistic concurrency and a snapshot row per version (docs/resources.md#policies). */
export class PoliciesService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Creates a policy at version 1: 422 shape/expression/decision function; 409 already_exists. */
  async create(input: CreatePolicyInput, actorId: string): Promise<Policy> {
    const body = liftDefinition(parseBody(createSchema, input), input) as Body
    const targets = body.targets as PolicyTarget[]
    await checkShape(this.#ctx.db, {
      policyType: body.policy_type,
      targets,
      filterExpression: body.filter_expression ?? null,
      maskExpression: body.mask_expression ?? null,
    })
    return this.#ctx.mutate(actorId, async (m) => {
      await checkDecisionFunction(m.tx, body.decision_function_id)
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(policies)
            .values({
              id: uuidv7(),
              name: body.name,
              description: body.description ?? null,
              policyType: body.policy_type,
              targets: normalizeTargets(body.policy_type, targets),
              filterExpression: body.filter_expression ?? null,
              maskExpression: body.mask_expression ?? null,
              decisionFunctionId: body.decision_function_id ?? null,
              isEnabled: body.is_enabled ?? true,
              enforcement: body.enforcement ?? 'enforce',
              version: 1,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('policy name already exists', 'name'),
      )
      const policy = row as Row
      await this.#recordVersion(m, policy)
      m.audit('policy', policy.id, 'create', { after: snapshot(policy) })
      return this.#toPolicy(m.tx, policy, false)
    })
  }

  /** One policy with its assignments; 404 when unknown. */
  async get(id: string): Promise<Policy> {
    const [row] = await this.#ctx.db.select().from(policies).where(eq(policies.id, id))
    if (!row) throw new ResourceNotFoundError('policy')
    return this.#toPolicy(this.#ctx.db, row, true)
  }

  /** The snapshot stored for one version, or null; survives later edits and deletion. */
  async getVersion(id: string, version: number): Promise<Record<string, unknown> | null> {
    const [row] = await this.#ctx.db
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.policyId, id), eq(policyVersions.version, version)))
    return row?.snapshot ?? null
  }

  /** Paginated policies, oldest first, without assignments. */
  async list(
    input: PageInput & { search?: string | undefined; policy_type?: string | undefined } = {},
  ): Promise<Page<Policy>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const where = and(
      input.search
        ? ilike(policies.name, `%${input.search.replace(/[\\%_]/g, '\\$&')}%`)
        : undefined,
      input.policy_type ? eq(policies.policyType, input.policy_type) : undefined,
    )
    const db = this.#ctx.db
    const rows = await db
      .select()
      .from(policies)
      .where(where)
      .orderBy(asc(policies.createdAt), asc(policies.id))
      .limit(pageSize)
      .offset(offset)
    const [total] = await db.select({ n: count() }).from(policies).where(where)
    const data: Policy[] = []
    for (const row of rows) data.push(await this.#toPolicy(db, row, false))
    return { data, total: total?.n ?? 0, page, page_size: pageSize }
  }

  /**
   * Versioned update (docs/resources.md#policies): 404; 422 schema; 409 version_conflict; 422 shape and
   * expressions on the merged result; 422 decision function; 409 already_exists. The write is
   * conditional on the version, so of two concurrent updates with one version exactly one wins.
   */
  async update(id: string, input: UpdatePolicyInput, actorId: string): Promise<Policy> {
    const [current] = await this.#ctx.db.select().from(policies).where(eq(policies.id, id))
    if (!current) throw new ResourceNotFoundError('policy')
    const parsed = parseBody(updateSchema, input)
    for (const key of ['name', 'policy_type', 'targets', 'is_enabled', 'enforcement']) {
      if ((input as Record<string, unknown>)[key] === null) {
        throw new ValidationError([
          { field: key, code: 'invalid_type', message: `${key} cannot be null` },
        ])
      }
    }
    const body = liftDefinition(parsed, input)
    if (parsed.version !== current.version) throw versionConflict(current.version)
    const policyType = body.policy_type ?? (current.policyType as PolicyType)
    const typeChanged = policyType !== current.policyType
    // A type change drops stored fields the new type forbids; sent fields are checked as sent.
    const keep = <T>(sent: T | undefined, stored: T, allowed: boolean): T | null =>
      sent !== undefined ? sent : typeChanged && !allowed ? null : stored
    const merged = {
      policyType,
      targets:
        (body.targets as PolicyTarget[] | undefined) ??
        (typeChanged ? normalizeTargets(policyType, current.targets) : current.targets),
      filterExpression:
        keep(body.filter_expression, current.filterExpression, policyType === 'row_filter') ?? null,
      maskExpression:
        keep(body.mask_expression, current.maskExpression, policyType === 'column_mask') ?? null,
    }
    await checkShape(this.#ctx.db, merged)
    return this.#ctx.mutate(actorId, async (m) => {
      if (body.decision_function_id) await checkDecisionFunction(m.tx, body.decision_function_id)
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .update(policies)
            .set({
              name: body.name ?? current.name,
              description: body.description === undefined ? current.description : body.description,
              policyType,
              targets: normalizeTargets(policyType, merged.targets),
              filterExpression: merged.filterExpression,
              maskExpression: merged.maskExpression,
              decisionFunctionId:
                body.decision_function_id === undefined
                  ? current.decisionFunctionId
                  : body.decision_function_id,
              isEnabled: body.is_enabled ?? current.isEnabled,
              enforcement: body.enforcement ?? current.enforcement,
              version: sql`${policies.version} + 1`,
              updatedBy: actorId,
              updatedAt: m.now,
            })
            .where(and(eq(policies.id, id), eq(policies.version, parsed.version)))
            .returning(),
        () => new ResourceConflictError('policy name already exists', 'name'),
      )
      if (!row) {
        const [now] = await m.tx
          .select({ version: policies.version })
          .from(policies)
          .where(eq(policies.id, id))
        if (!now) throw new ResourceNotFoundError('policy')
        throw versionConflict(now.version)
      }
      await this.#recordVersion(m, row)
      const diff = diffFields(snapshot(current), snapshot(row)) ?? { before: {}, after: {} }
      m.audit('policy', id, 'update', {
        before: { ...diff.before, version: current.version },
        after: { ...diff.after, version: row.version },
      })
      await this.#invalidateAssigned(m, id)
      return this.#toPolicy(m.tx, row, true)
    })
  }

  /** Deletes a policy and its assignments (one `unassign` each, reason policy_deleted). */
  async delete(id: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const [row] = await m.tx.select().from(policies).where(eq(policies.id, id)).for('update')
      if (!row) throw new ResourceNotFoundError('policy')
      await this.#invalidateAssigned(m, id)
      const assignments = await m.tx
        .select()
        .from(policyAssignments)
        .where(eq(policyAssignments.policyId, id))
      await removeAssignments(m, assignments, 'policy_deleted')
      await m.tx.delete(policies).where(eq(policies.id, id))
      m.audit('policy', id, 'delete', { before: snapshot(row) })
    })
  }

  /** `POST /policies/validate-expression` (docs/resources.md#policies): no side effects. */
  async validateExpression(input: {
    expression: string
    is_mask?: boolean | null
  }): Promise<
    | { valid: true; variables: string[]; undefined_attributes: string[] }
    | { valid: false; error: string }
  > {
    const body = parseBody(
      v.object({
        expression: v.string('expected a string'),
        is_mask: v.nullish(v.boolean('expected a boolean')),
      }),
      input,
    )
    const core = await ensureParser()
    const result = core.validateExpression(body.expression, { isMask: body.is_mask ?? false })
    if (!result.valid) return { valid: false, error: result.error }
    const defs = await this.#ctx.db
      .select({ key: attributeDefinitions.key })
      .from(attributeDefinitions)
      .where(eq(attributeDefinitions.entityType, 'user'))
    const known = new Set(['id', 'username', 'roles', 'user_id', ...defs.map((d) => d.key)])
    return {
      valid: true,
      variables: result.variables,
      undefined_attributes: result.variables.filter((k) => !known.has(k)),
    }
  }

  async #recordVersion(m: Mutation, row: Row): Promise<void> {
    await m.tx.insert(policyVersions).values({
      policyId: row.id,
      version: row.version,
      snapshot: snapshot(row),
      createdBy: m.actorId,
      createdAt: m.now,
    })
  }

  async #invalidateAssigned(m: Mutation, policyId: string): Promise<void> {
    const rows = await m.tx
      .selectDistinct({ id: policyAssignments.datasourceId })
      .from(policyAssignments)
      .where(eq(policyAssignments.policyId, policyId))
    for (const r of rows) m.invalidate({ type: 'ds', datasourceId: r.id })
  }

  async #toPolicy(db: Db, row: Row, withAssignments: boolean): Promise<Policy> {
    const [fn] = row.decisionFunctionId
      ? await db
          .select()
          .from(decisionFunctions)
          .where(eq(decisionFunctions.id, row.decisionFunctionId))
      : []
    const assignments = await listAssignments(db, { policyId: row.id })
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      policy_type: row.policyType as PolicyType,
      targets: normalizeTargets(row.policyType as PolicyType, row.targets),
      filter_expression: row.filterExpression,
      mask_expression: row.maskExpression,
      decision_function_id: row.decisionFunctionId,
      decision_function: fn
        ? {
            id: fn.id,
            name: fn.name,
            is_enabled: fn.isEnabled,
            evaluate_context: fn.evaluateContext,
          }
        : null,
      is_enabled: row.isEnabled,
      enforcement: row.enforcement as PolicyEnforcement,
      version: row.version,
      assignment_count: assignments.length,
      created_by: row.createdBy,
      updated_by: row.updatedBy,
      created_at: isoNow(row.createdAt),
      updated_at: isoNow(row.updatedAt),
      ...(withAssignments ? { assignments } : {}),
    }
  }
}

/** `columns` is null where the type forbids it (docs/resources.md#policies). */
function normalizeTargets(type: PolicyType, targets: readonly PolicyTarget[]): PolicyTarget[] {
  const noColumns = type === 'row_filter' || type === 'table_deny'
  const all = ['*']
  return targets.map((t) => {
    // A tag target keeps its tags; the name patterns it left out match everything.
    const tagged = t.tags && t.tags.length > 0
    return {
      schemas: t.schemas ? [...t.schemas] : all,
      tables: t.tables ? [...t.tables] : all,
      columns: noColumns ? null : t.columns ? [...t.columns] : tagged ? all : null,
      ...(tagged ? { tags: [...new Set(t.tags)].sort() } : {}),
    }
  })
}
