import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { optionalBoolean, policyName, search, text, uuid } from './common.js'

/** The five policy kinds (spec 1 item 4). */
export const POLICY_TYPES = [
  'row_filter',
  'column_mask',
  'column_allow',
  'column_deny',
  'table_deny',
] as const

const pattern = v.pipe(
  text(1, 128),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is exactly "no control characters"
  v.regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters'),
)
const patterns = v.pipe(
  v.array(pattern, 'expected an array of patterns'),
  v.minLength(1, 'needs at least one pattern'),
  v.maxLength(100, 'allows at most 100 patterns'),
)
const target = v.object({
  schemas: patterns,
  tables: patterns,
  /** Required or forbidden by `policy_type`: the shape check runs in the store (admin-api 9.2). */
  columns: v.nullish(
    v.pipe(v.array(pattern, 'expected an array of patterns'), v.maxLength(100, 'at most 100')),
  ),
})
const expression = v.nullish(text(0, 10_000))

const policyFields = {
  name: policyName,
  policy_type: v.picklist(POLICY_TYPES, 'is not a policy type'),
  targets: v.pipe(
    v.array(target, 'expected an array'),
    v.minLength(1, 'needs at least one target'),
    v.maxLength(50, 'allows at most 50 targets'),
  ),
  description: v.nullish(text(0, 1000)),
  filter_expression: expression,
  mask_expression: expression,
  decision_function_id: v.nullish(uuid),
  is_enabled: optionalBoolean,
  definition: v.nullish(v.object({ filter_expression: expression, mask_expression: expression })),
}

const version = v.pipe(v.number('expected an integer'), v.integer('expected an integer'))

/** Body of `POST /policies`. */
export const createPolicyBody = v.object(policyFields)

/** Body of `PUT`/`PATCH /policies/{id}`: `version` is required (optimistic concurrency). */
export const updatePolicyBody = v.object({ ...v.partial(v.object(policyFields)).entries, version })

/** Body of `POST /policies/validate-expression`. */
export const validateExpressionBody = v.object({
  expression: v.string('expected a string'),
  is_mask: optionalBoolean,
})

/** Query of `GET /policies`. */
export const listPoliciesQuery = v.object({
  ...pageQuery,
  search,
  policy_type: v.optional(v.picklist(POLICY_TYPES, 'is not a policy type')),
})
