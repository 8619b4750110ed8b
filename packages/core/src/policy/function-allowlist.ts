/**
 * The reviewed allowlist of functions and operators, shared by user queries, filter
 * expressions and mask expressions. A function is here only when it is built in, reads
 * nothing but its arguments (no SQL execution, files, settings, network, other sessions or
 * object existence) and cannot be used to learn about hidden objects. Anything else,
 * including user-defined functions in the upstream, is answered as "does not exist".
 */

/** Why a group of functions is safe; each name below belongs to exactly one group. */
const GROUPS: Record<string, { reason: string; names: string }> = {
  math: {
    reason: 'pure arithmetic on its arguments',
    names: `abs cbrt ceil ceiling degrees div exp factorial floor gcd lcm ln log log10 min_scale mod
      pi power radians round scale sign sqrt trim_scale trunc width_bucket random random_normal
      acos acosd asin asind atan atand atan2 atan2d cos cosd cot cotd sin sind tan tand
      sinh cosh tanh asinh acosh atanh numeric int2 int4 int8 float4 float8 erf erfc`,
  },
  string: {
    reason: 'pure string functions on their arguments',
    names: `ascii bit_length btrim char_length character_length chr concat concat_ws format initcap
      left length lower lpad ltrim md5 normalize octet_length overlay position quote_ident
      quote_literal quote_nullable regexp_count regexp_instr regexp_like regexp_match
      regexp_matches regexp_replace regexp_split_to_array regexp_split_to_table regexp_substr repeat
      replace reverse right rpad rtrim split_part starts_with string_to_array string_to_table strpos
      substr substring to_ascii to_hex translate unistr upper casefold sha224 sha256 sha384 sha512
      encode decode convert_from convert_to get_byte set_byte get_bit set_bit textlen text
      similar_to_escape like_escape`,
  },
  format: {
    reason: 'formatting and parsing of values',
    names: `to_char to_date to_number to_timestamp pg_encoding_to_char pg_char_to_encoding
      pg_size_pretty pg_size_bytes`,
  },
  datetime: {
    reason: 'date/time arithmetic on its arguments or the statement clock',
    names: `age clock_timestamp current_date current_time current_timestamp date_add date_bin
      date_part date_subtract date_trunc isfinite justify_days justify_hours justify_interval
      localtime localtimestamp make_date make_interval make_time make_timestamp make_timestamptz
      now statement_timestamp timeofday transaction_timestamp timezone extract`,
  },
  conditional: {
    reason: 'comparison and null handling',
    names: `coalesce greatest least nullif num_nonnulls num_nulls`,
  },
  aggregate: {
    reason: 'aggregates over the rows the query already reads',
    names: `array_agg avg bit_and bit_or bit_xor bool_and bool_or count every json_agg jsonb_agg
      json_object_agg jsonb_object_agg max min string_agg sum corr covar_pop covar_samp
      regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
      stddev stddev_pop stddev_samp variance var_pop var_samp mode percentile_cont percentile_disc
      rank dense_rank percent_rank cume_dist any_value json_agg_strict jsonb_agg_strict
      json_object_agg_strict jsonb_object_agg_strict json_object_agg_unique jsonb_object_agg_unique
      range_agg range_intersect_agg xmlagg`,
  },
  window: {
    reason: 'window functions over the rows the query already reads',
    names: `row_number ntile lag lead first_value last_value nth_value`,
  },
  json: {
    reason: 'JSON construction and access on their arguments',
    names: `to_json to_jsonb array_to_json row_to_json json_build_array jsonb_build_array
      json_build_object jsonb_build_object json_object jsonb_object json_array_length
      jsonb_array_length json_each jsonb_each json_each_text jsonb_each_text json_extract_path
      jsonb_extract_path json_extract_path_text jsonb_extract_path_text json_object_keys
      jsonb_object_keys json_array_elements jsonb_array_elements json_array_elements_text
      jsonb_array_elements_text json_typeof jsonb_typeof json_strip_nulls jsonb_strip_nulls
      jsonb_set jsonb_set_lax jsonb_insert jsonb_pretty jsonb_path_exists jsonb_path_match
      jsonb_path_query jsonb_path_query_array jsonb_path_query_first json_populate_record
      jsonb_populate_record json_to_record jsonb_to_record json_to_recordset jsonb_to_recordset
      json_scalar json_serialize`,
  },
  array: {
    reason: 'array functions on their arguments',
    names: `array_append array_cat array_dims array_fill array_length array_lower array_ndims
      array_position array_positions array_prepend array_remove array_replace array_to_string
      array_upper cardinality trim_array unnest generate_series generate_subscripts array_reverse
      array_sample array_shuffle array_sort`,
  },
  network: {
    reason: 'pure functions on inet/cidr values in the arguments',
    names: `abbrev broadcast family host hostmask masklen netmask network set_masklen`,
  },
  misc: {
    reason: 'pure helpers with no access to anything but their arguments',
    names: `gen_random_uuid uuidv4 uuidv7 pg_typeof bool int4range int8range numrange
      tsrange tstzrange daterange lower_inc upper_inc lower_inf upper_inf isempty range_merge
      multirange`,
  },
  identity: {
    reason: 'rewritten by the proxy to the Palisade identity, never reaching the upstream as is',
    names: `current_database current_user session_user current_role current_catalog current_schema
      version`,
  },
}

/** Function name → reason it is safe. Names are matched unqualified or with `pg_catalog`. */
export const FUNCTION_ALLOWLIST: ReadonlyMap<string, string> = new Map(
  Object.values(GROUPS).flatMap(({ reason, names }) =>
    names
      .split(/\s+/)
      .filter((n) => n.length > 0)
      .map((n) => [n, reason] as const),
  ),
)

/**
 * Operators allowed by symbol. Built-in operators on built-in types are pure; operator
 * names outside this list (custom operators defined in the upstream) are refused.
 */
export const OPERATOR_ALLOWLIST: ReadonlySet<string> = new Set(
  `+ - * / % ^ |/ ||/ @ & | # ~ << >> = <> != < > <= >= || ~~ ~~* !~~ !~~* ~* !~ -> ->> #> #>>
   @> <@ ? ?| ?& && @? @@ - << >> &< &> -|- <<| |>> &<| |&> <-> ##`.split(/\s+/),
)

/**
 * Functions outside pg_catalog that drivers call, allowed only schema-qualified.
 * `_pg_expandarray` (pgjdbc's getPrimaryKeys) expands an array into (value, position) rows.
 */
const QUALIFIED_ALLOWLIST: ReadonlySet<string> = new Set(['information_schema._pg_expandarray'])

/** Whether a function name (optionally `pg_catalog`-qualified) is on the allowlist. */
export function isAllowedFunction(names: readonly string[]): boolean {
  if (names.length === 1) return FUNCTION_ALLOWLIST.has(names[0] as string)
  if (names.length === 2 && names[0] === 'pg_catalog')
    return FUNCTION_ALLOWLIST.has(names[1] as string)
  return names.length === 2 && QUALIFIED_ALLOWLIST.has(names.join('.'))
}

/** Whether an operator name (optionally `pg_catalog`-qualified, as `OPERATOR(pg_catalog.+)`) is allowed. */
export function isAllowedOperator(names: readonly string[]): boolean {
  if (names.length === 1) return OPERATOR_ALLOWLIST.has(names[0] as string)
  if (names.length === 2 && names[0] === 'pg_catalog')
    return OPERATOR_ALLOWLIST.has(names[1] as string)
  return false
}

/** `reg*` object-identifier types: casting to them probes object existence by name. */
export const REG_TYPES: ReadonlySet<string> = new Set([
  'regclass',
  'regcollation',
  'regconfig',
  'regdictionary',
  'regnamespace',
  'regoper',
  'regoperator',
  'regproc',
  'regprocedure',
  'regrole',
  'regtype',
])
