// What a policy body must be: fields, shape by type, expressions, mask types, its decision function.
import {
  MAX_ALLOWED_AGGREGATES,
  MIN_GROUP_SIZE,
  type PolicyTarget,
  type PolicyType,
  STATISTIC_AGGREGATES,
  VALUE_REVEALING_AGGREGATES,
} from '@palisade/core'
import { eq } from 'drizzle-orm'
import * as v from 'valibot'
import { ensureParser } from '../kernel/core-bridge.js'
import type { Db } from '../kernel/db.js'
import { StoreError, ValidationError } from '../kernel/errors.js'
import { boundedString, isPlainObject, policyName, uuidString } from '../kernel/validation.js'
import {
  catalogColumns,
  catalogSchemas,
  catalogTables,
  catalogTags,
  decisionFunctions,
} from '../tables.js'

/** How a policy acts: applied, or only evaluated and audited (docs/policies.md#shadow-mode). */
export const POLICY_ENFORCEMENTS = ['enforce', 'shadow'] as const
export type PolicyEnforcement = (typeof POLICY_ENFORCEMENTS)[number]

/** The policy kinds (docs/policies.md#each-type-with-an-example); the admin API validates with the same list. */
export const POLICY_TYPES = [
  'row_filter',
  'column_mask',
  'column_allow',
  'column_deny',
  'table_deny',
  'aggregation',
  'projection',
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
// Bounds and names here too, so the OpenAPI document gives them; the type each field belongs
// to, and repeats, are core's shape check (validatePolicy).
const groupSizeRange = `must be an integer from ${MIN_GROUP_SIZE.min} to 1,000,000`
const minGroupSize = v.nullish(
  v.pipe(
    v.number('expected an integer'),
    v.minValue(MIN_GROUP_SIZE.min, groupSizeRange),
    v.maxValue(MIN_GROUP_SIZE.max, groupSizeRange),
  ),
)
const aggregateName = v.picklist(VALUE_REVEALING_AGGREGATES, (issue) => {
  const name = String(issue.input)
  return STATISTIC_AGGREGATES.has(name)
    ? `lists ${name}, a statistic of the group that is always allowed: list only value-revealing aggregates`
    : `lists ${name}, which is not a value-revealing aggregate (lowercase names such as min, max, array_agg)`
})
const allowedAggregates = v.nullish(
  v.pipe(
    v.array(aggregateName, 'expected an array of aggregate names'),
    v.maxLength(MAX_ALLOWED_AGGREGATES, `at most ${MAX_ALLOWED_AGGREGATES} aggregates`),
  ),
)
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
  min_group_size: minGroupSize,
  allowed_aggregates: allowedAggregates,
  decision_function_id: v.nullish(uuidString),
  is_enabled: v.nullish(v.boolean('expected a boolean')),
  enforcement: v.nullish(v.picklist(POLICY_ENFORCEMENTS, 'expected enforce or shadow')),
  definition: v.nullish(v.object({ filter_expression: expression, mask_expression: expression })),
}
export const createPolicySchema = v.object(fields)
export const updatePolicySchema = v.object({
  ...v.partial(v.object(fields)).entries,
  version: v.pipe(v.number('expected an integer'), v.integer('expected an integer')),
})

export type Body = v.InferOutput<typeof createPolicySchema>

/** Applies the `definition` alternative form (docs/resources.md#policies): used only where top level is absent. */
export function liftDefinition(body: Partial<Body>, raw: unknown): Partial<Body> {
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
export async function checkShape(
  db: Db,
  p: {
    policyType: PolicyType
    targets: PolicyTarget[]
    filterExpression: string | null
    maskExpression: string | null
    minGroupSize: number | null
    allowedAggregates: readonly string[] | null
  },
): Promise<void> {
  const core = await ensureParser()
  const result = core.validatePolicy({
    policyType: p.policyType,
    targets: p.targets,
    filterExpression: p.filterExpression,
    maskExpression: p.maskExpression,
    minGroupSize: p.minGroupSize,
    allowedAggregates: p.allowedAggregates,
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
export async function checkMaskTypes(db: Db, targets: PolicyTarget[], maskExpression: string) {
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

export async function checkDecisionFunction(db: Db, id: string | null | undefined) {
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

/** `columns` is null where the type forbids it (docs/resources.md#policies). */
export function normalizeTargets(
  type: PolicyType,
  targets: readonly PolicyTarget[],
): PolicyTarget[] {
  const noColumns = type === 'row_filter' || type === 'table_deny' || type === 'aggregation'
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

/**
 * `allowed_aggregates` as stored: sorted on an aggregation policy (`[]` when none is allowed),
 * null on every other type.
 */
export function normalizeAllowedAggregates(
  type: PolicyType,
  names: readonly string[] | null | undefined,
): string[] | null {
  return type === 'aggregation' ? [...(names ?? [])].sort() : null
}
