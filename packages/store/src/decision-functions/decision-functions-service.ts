import { asc, count, eq, ilike, inArray, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { diffFields, isoNow, type StoreContext } from '../kernel/context.js'
import { ensureCore } from '../kernel/core-bridge.js'
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
import { boundedString, parseBody, policyName } from '../kernel/validation.js'
import { decisionFunctions, policies, policyAssignments } from '../tables.js'

/** A decision function as the admin API returns it (docs/decision-functions.md); never the module. */
export interface DecisionFunction {
  id: string
  name: string
  description: string | null
  language: 'javascript'
  decision_fn: string
  decision_config: unknown
  evaluate_context: 'session' | 'query'
  on_error: 'deny' | 'skip'
  log_level: 'off' | 'error' | 'info'
  is_enabled: boolean
  version: number
  policy_count: number
  module_size_bytes: number | null
  created_by: string | null
  updated_by: string | null
  created_at: string
  updated_at: string
}

/** Body of `POST /decision-functions`. */
export interface CreateDecisionFunctionInput {
  name: string
  decision_fn: string
  evaluate_context: string
  description?: string | null
  language?: string | null
  decision_config?: unknown
  on_error?: string | null
  log_level?: string | null
  is_enabled?: boolean | null
}

const fields = {
  name: policyName,
  description: v.nullish(boundedString(0, 1000)),
  language: v.nullish(v.literal('javascript', 'only javascript is supported')),
  decision_fn: v.pipe(
    v.string('expected a string'),
    v.check((s) => s.trim() !== '', 'must not be blank'),
    v.check((s) => Buffer.byteLength(s) <= 65_536, 'must be at most 64 KiB'),
  ),
  decision_config: v.optional(v.unknown()),
  evaluate_context: v.picklist(['session', 'query'], 'expected session or query'),
  on_error: v.nullish(v.picklist(['deny', 'skip'], 'expected deny or skip')),
  log_level: v.nullish(v.picklist(['off', 'error', 'info'], 'expected off, error or info')),
  is_enabled: v.nullish(v.boolean('expected a boolean')),
}
export const createDecisionFunctionSchema = v.object(fields)
export const updateDecisionFunctionSchema = v.object({
  ...v.partial(v.object(fields)).entries,
  version: v.pipe(v.number('expected an integer'), v.integer('expected an integer')),
})

type Row = typeof decisionFunctions.$inferSelect

function toRecord(row: Row, policyCount: number): DecisionFunction {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    language: 'javascript',
    decision_fn: row.decisionFn,
    decision_config: row.decisionConfig,
    evaluate_context: row.evaluateContext as DecisionFunction['evaluate_context'],
    on_error: row.onError as DecisionFunction['on_error'],
    log_level: row.logLevel as DecisionFunction['log_level'],
    is_enabled: row.isEnabled,
    version: row.version,
    policy_count: policyCount,
    module_size_bytes: row.artifact === null ? null : Buffer.byteLength(row.artifact),
    created_by: row.createdBy,
    updated_by: row.updatedBy,
    created_at: isoNow(row.createdAt),
    updated_at: isoNow(row.updatedAt),
  }
}

/** Audit snapshot: every field but the source and the module (docs/audit.md#admin-audit). */
const snapshot = (r: Row) => ({
  name: r.name,
  description: r.description,
  language: r.language,
  decision_config: r.decisionConfig,
  evaluate_context: r.evaluateContext,
  on_error: r.onError,
  log_level: r.logLevel,
  is_enabled: r.isEnabled,
  version: r.version,
})

async function compile(source: string): Promise<string> {
  const core = await ensureCore()
  try {
    return core.compileDecisionFunction(source).artifact
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new StoreError('compile_failed', message, [
      { field: 'decision_fn', code: 'parse_error', message },
    ])
  }
}

async function policyCount(db: Db, id: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(policies)
    .where(eq(policies.decisionFunctionId, id))
  return row?.n ?? 0
}

/** Decision functions, compiled at save (docs/decision-functions.md). */
export class DecisionFunctionsService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Creates and compiles a function; 422 validation_failed/compile_failed, 409 already_exists. */
  async create(input: CreateDecisionFunctionInput, actorId: string): Promise<DecisionFunction> {
    const body = parseBody(createDecisionFunctionSchema, input)
    const artifact = await compile(body.decision_fn)
    return this.#ctx.mutate(actorId, async (m) => {
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(decisionFunctions)
            .values({
              id: uuidv7(),
              name: body.name,
              description: body.description ?? null,
              decisionFn: body.decision_fn,
              decisionConfig: body.decision_config ?? {},
              evaluateContext: body.evaluate_context,
              onError: body.on_error ?? 'deny',
              logLevel: body.log_level ?? 'off',
              isEnabled: body.is_enabled ?? true,
              version: 1,
              artifact,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('decision function name already exists', 'name'),
      )
      m.audit('decision_function', (row as Row).id, 'create', { after: snapshot(row as Row) })
      return toRecord(row as Row, 0)
    })
  }

  /** One function; 404 when unknown. */
  async get(id: string): Promise<DecisionFunction> {
    const [row] = await this.#ctx.db
      .select()
      .from(decisionFunctions)
      .where(eq(decisionFunctions.id, id))
    if (!row) throw new ResourceNotFoundError('decision function')
    return toRecord(row, await policyCount(this.#ctx.db, id))
  }

  /** Paginated functions by name. */
  async list(
    input: PageInput & { search?: string | undefined } = {},
  ): Promise<Page<DecisionFunction>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const where = input.search
      ? ilike(decisionFunctions.name, `%${input.search.replace(/[\\%_]/g, '\\$&')}%`)
      : undefined
    const rows = await this.#ctx.db
      .select({
        row: decisionFunctions,
        n: sql<number>`(SELECT count(*)::int FROM policies p WHERE p.decision_function_id = ${decisionFunctions.id})`,
      })
      .from(decisionFunctions)
      .where(where)
      .orderBy(asc(decisionFunctions.name), asc(decisionFunctions.id))
      .limit(pageSize)
      .offset(offset)
    const [total] = await this.#ctx.db.select({ n: count() }).from(decisionFunctions).where(where)
    return {
      data: rows.map((r) => toRecord(r.row, Number(r.n))),
      total: total?.n ?? 0,
      page,
      page_size: pageSize,
    }
  }

  /** Versioned update: 404; 422; 409 version_conflict; 422 compile_failed; 409 already_exists. */
  async update(
    id: string,
    input: Partial<CreateDecisionFunctionInput> & { version: number },
    actorId: string,
  ): Promise<DecisionFunction> {
    const [current] = await this.#ctx.db
      .select()
      .from(decisionFunctions)
      .where(eq(decisionFunctions.id, id))
    if (!current) throw new ResourceNotFoundError('decision function')
    const body = parseBody(updateDecisionFunctionSchema, input)
    for (const key of [
      'name',
      'decision_fn',
      'evaluate_context',
      'on_error',
      'log_level',
      'is_enabled',
    ]) {
      if ((input as Record<string, unknown>)[key] === null) {
        throw new ValidationError([
          { field: key, code: 'invalid_type', message: `${key} cannot be null` },
        ])
      }
    }
    if (body.version !== current.version) throw versionConflict(current.version)
    const sourceChanged = body.decision_fn !== undefined && body.decision_fn !== current.decisionFn
    const artifact = sourceChanged ? await compile(body.decision_fn as string) : current.artifact
    return this.#ctx.mutate(actorId, async (m) => {
      const next = {
        name: body.name ?? current.name,
        description: body.description === undefined ? current.description : body.description,
        decisionFn: body.decision_fn ?? current.decisionFn,
        decisionConfig:
          body.decision_config === undefined
            ? current.decisionConfig
            : (body.decision_config ?? {}),
        evaluateContext: body.evaluate_context ?? current.evaluateContext,
        onError: body.on_error ?? current.onError,
        logLevel: body.log_level ?? current.logLevel,
        isEnabled: body.is_enabled ?? current.isEnabled,
        artifact,
        version: current.version + 1,
        updatedBy: actorId,
        updatedAt: m.now,
      }
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .update(decisionFunctions)
            .set(next)
            .where(
              sql`${decisionFunctions.id} = ${id} AND ${decisionFunctions.version} = ${body.version}`,
            )
            .returning(),
        () => new ResourceConflictError('decision function name already exists', 'name'),
      )
      if (!row) throw versionConflict(await this.#currentVersion(m.tx, id))
      const diff = diffFields(snapshot(current), snapshot(row)) ?? { before: {}, after: {} }
      m.audit('decision_function', id, 'update', {
        before: { ...diff.before, version: current.version },
        after: { ...diff.after, version: row.version },
        ...(sourceChanged ? { decision_fn_changed: true } : {}),
      })
      await invalidateUsersOfFunction(m, id)
      return toRecord(row, await policyCount(m.tx, id))
    })
  }

  /** Deletes a function; 409 in_use while any policy references it. */
  async delete(id: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const [row] = await m.tx
        .select()
        .from(decisionFunctions)
        .where(eq(decisionFunctions.id, id))
        .for('update')
      if (!row) throw new ResourceNotFoundError('decision function')
      const n = await policyCount(m.tx, id)
      if (n > 0) throw new StoreError('in_use', `the decision function is used by ${n} policies`)
      await m.tx.delete(decisionFunctions).where(eq(decisionFunctions.id, id))
      m.audit('decision_function', id, 'delete', { before: snapshot(row) })
    })
  }

  async #currentVersion(db: Db, id: string): Promise<number> {
    const [row] = await db
      .select({ version: decisionFunctions.version })
      .from(decisionFunctions)
      .where(eq(decisionFunctions.id, id))
    return row?.version ?? 0
  }
}

/** 409 version_conflict whose first detail gives the stored version (docs/resources.md#policies). */
export function versionConflict(current: number): StoreError {
  return new StoreError('version_conflict', 'the resource was changed by someone else; reload it', [
    { field: 'version', code: 'out_of_range', message: `current version is ${current}` },
  ])
}

/** `ds(D)` for every datasource where a policy using the function is assigned. */
async function invalidateUsersOfFunction(m: Mutation, functionId: string): Promise<void> {
  const rows = await m.tx
    .selectDistinct({ id: policyAssignments.datasourceId })
    .from(policyAssignments)
    .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
    .where(inArray(policies.decisionFunctionId, [functionId]))
  for (const r of rows) m.invalidate({ type: 'ds', datasourceId: r.id })
}
