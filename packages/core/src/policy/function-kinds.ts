/** Aggregate and window function names: never allowed in filter or mask expressions. */
export const AGGREGATE_FUNCTIONS: ReadonlySet<string> = new Set(
  `array_agg avg bit_and bit_or bit_xor bool_and bool_or count every json_agg jsonb_agg
   json_object_agg jsonb_object_agg max min string_agg sum corr covar_pop covar_samp regr_avgx
   regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy stddev
   stddev_pop stddev_samp variance var_pop var_samp mode percentile_cont percentile_disc rank
   dense_rank percent_rank cume_dist any_value row_number ntile lag lead first_value last_value
   nth_value json_agg_strict jsonb_agg_strict range_agg range_intersect_agg xmlagg
   json_object_agg_strict jsonb_object_agg_strict json_object_agg_unique jsonb_object_agg_unique`.split(
    /\s+/,
  ),
)

/** Functions that return sets: they would change a scan's row count inside a filter. */
export const SET_RETURNING_FUNCTIONS: ReadonlySet<string> = new Set(
  `unnest generate_series generate_subscripts regexp_matches regexp_split_to_table string_to_table
   json_each jsonb_each json_each_text jsonb_each_text json_array_elements jsonb_array_elements
   json_array_elements_text jsonb_array_elements_text json_object_keys jsonb_object_keys
   json_to_recordset jsonb_to_recordset jsonb_path_query json_populate_recordset
   jsonb_populate_recordset`.split(/\s+/),
)
