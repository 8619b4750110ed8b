/**
 * Aggregates by what they hand back (docs/policies.md, "Aggregation"). Under an aggregation
 * policy the first kind is allowed over the table's columns; the second only when the policy
 * lists it in `allowed_aggregates`; any other aggregate (user-defined ones included) is refused.
 */

/** Aggregates whose answer is a statistic of the group, never one row's value. */
export const STATISTIC_AGGREGATES: ReadonlySet<string> = new Set([
  'count',
  'sum',
  'avg',
  'variance',
  'var_pop',
  'var_samp',
  'stddev',
  'stddev_pop',
  'stddev_samp',
  'corr',
  'covar_pop',
  'covar_samp',
  'regr_avgx',
  'regr_avgy',
  'regr_count',
  'regr_intercept',
  'regr_r2',
  'regr_slope',
  'regr_sxx',
  'regr_sxy',
  'regr_syy',
])

/** Aggregates that can hand back an individual row's value; allowed only by name. */
export const VALUE_REVEALING_AGGREGATES: readonly string[] = [
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
]
