/**
 * What the policy form offers per type. The server validates (core's validatePolicy); these
 * lists only shape the form, and a server test checks them against the server's own.
 */

/** The policy types, in the order the form lists them (docs/policies.md). */
export const POLICY_TYPES = [
  'row_filter',
  'column_mask',
  'column_allow',
  'column_deny',
  'table_deny',
  'aggregation',
  'projection',
] as const

/** Types whose targets name columns. */
export const hasColumns = (type: string) => type.startsWith('column_') || type === 'projection'

/**
 * The aggregates an aggregation policy may allow by name (core's VALUE_REVEALING_AGGREGATES):
 * each can hand back one row's value. Statistics such as count, sum and avg are always allowed.
 */
export const VALUE_REVEALING_AGGREGATES = [
  'min',
  'max',
  'array_agg',
  'string_agg',
  'json_agg',
  'jsonb_agg',
  'json_object_agg',
  'jsonb_object_agg',
  'json_agg_strict',
  'jsonb_agg_strict',
  'json_object_agg_strict',
  'jsonb_object_agg_strict',
  'json_object_agg_unique',
  'jsonb_object_agg_unique',
  'json_object_agg_unique_strict',
  'jsonb_object_agg_unique_strict',
  'percentile_disc',
  'percentile_cont',
  'mode',
  'any_value',
  'bool_and',
  'bool_or',
  'every',
  'bit_and',
  'bit_or',
  'bit_xor',
  'xmlagg',
  'range_agg',
  'range_intersect_agg',
] as const
