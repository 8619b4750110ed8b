import type { PolicyTarget, PolicyType } from '@palisade/core'
import { and, asc, count, eq, ilike, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { versionConflict } from '../decision-functions/decision-functions-service.js'
import { diffFields, isoNow, type StoreContext } from '../kernel/context.js'
import { ensureParser } from '../kernel/core-bridge.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import { ResourceConflictError, ResourceNotFoundError, ValidationError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { parseBody } from '../kernel/validation.js'
import {
  attributeDefinitions,
  decisionFunctions,
  policies,
  policyAssignments,
  policyVersions,
} from '../tables.js'
import { removeAssignments } from './assignment-cascade.js'
import { type Assignment, listAssignments } from './assignments-service.js'
import {
  type Body,
  checkDecisionFunction,
  checkShape,
  createPolicySchema,
  liftDefinition,
  normalizeAllowedAggregates,
  normalizeTargets,
  type PolicyEnforcement,
  updatePolicySchema,
} from './policy-validation.js'

/** A policy as the admin API returns it (docs/resources.md#policies). */
export interface Policy {
  id: string
  name: string
  description: string | null
  policy_type: PolicyType
  targets: PolicyTarget[]
  filter_expression: string | null
  mask_expression: string | null
  /** `aggregation`: the fewest rows a returned group may draw on; null on other types. */
  min_group_size: number | null
  /** `aggregation`: the value-revealing aggregates allowed, sorted (`[]`: none); null on other types. */
  allowed_aggregates: string[] | null
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

/** Body of `POST /policies` (docs/resources.md#policies). */
export interface CreatePolicyInput {
  name: string
  policy_type: string
  targets: { schemas: string[]; tables: string[]; columns?: string[] | null }[]
  description?: string | null
  filter_expression?: string | null
  mask_expression?: string | null
  /** Required on `aggregation`, 2 to 1,000,000; refused on other types. */
  min_group_size?: number | null
  /** `aggregation` only: value-revealing aggregates to allow (docs/policies.md#aggregation). */
  allowed_aggregates?: string[] | null
  decision_function_id?: string | null
  is_enabled?: boolean | null
  enforcement?: PolicyEnforcement | null
  definition?: { filter_expression?: string | null; mask_expression?: string | null } | null
}

/** Body of `PUT /policies/{id}`: `version` plus any create field. */
export type UpdatePolicyInput = Partial<CreatePolicyInput> & { version: number }

type Row = typeof policies.$inferSelect

/** Every stored field, as the create audit and version snapshots record it. */
function snapshot(r: Row) {
  return {
    name: r.name,
    description: r.description,
    policy_type: r.policyType,
    targets: r.targets,
    filter_expression: r.filterExpression,
    mask_expression: r.maskExpression,
    min_group_size: r.minGroupSize,
    allowed_aggregates: r.allowedAggregates,
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
    const body = liftDefinition(parseBody(createPolicySchema, input), input) as Body
    const targets = body.targets as PolicyTarget[]
    await checkShape(this.#ctx.db, {
      policyType: body.policy_type,
      targets,
      filterExpression: body.filter_expression ?? null,
      maskExpression: body.mask_expression ?? null,
      minGroupSize: body.min_group_size ?? null,
      allowedAggregates: body.allowed_aggregates ?? null,
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
              minGroupSize: body.min_group_size ?? null,
              allowedAggregates: normalizeAllowedAggregates(
                body.policy_type,
                body.allowed_aggregates,
              ),
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
    const parsed = parseBody(updatePolicySchema, input)
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
      minGroupSize:
        keep(body.min_group_size, current.minGroupSize, policyType === 'aggregation') ?? null,
      allowedAggregates:
        keep(body.allowed_aggregates, current.allowedAggregates, policyType === 'aggregation') ??
        null,
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
              minGroupSize: merged.minGroupSize,
              allowedAggregates: normalizeAllowedAggregates(policyType, merged.allowedAggregates),
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
      min_group_size: row.minGroupSize,
      allowed_aggregates: row.allowedAggregates,
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
