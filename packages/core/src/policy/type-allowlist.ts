/**
 * Built-in types a query may name in casts and column definitions. Any other type name, in
 * particular the row type every table has, is answered as missing: `NULL::secrets` would
 * otherwise probe whether a hidden table exists, and `NULL::customers` would list a table's
 * denied columns. Extension and user-defined types in the upstream are refused the same way.
 */
export const TYPE_ALLOWLIST: ReadonlySet<string> = new Set(
  `bool boolean int int2 int4 int8 integer smallint bigint float float4 float8 real numeric decimal
   money text varchar char bpchar character name bytea date time timetz timestamp timestamptz
   interval json jsonb jsonpath uuid xml inet cidr macaddr macaddr8 bit varbit point line lseg box
   path polygon circle tsvector tsquery int4range int8range numrange tsrange tstzrange daterange
   int4multirange int8multirange nummultirange tsmultirange tstzmultirange datemultirange oid
   record void unknown`.split(/\s+/),
)

/**
 * Whether a type name (optionally `pg_catalog`-qualified) is a built-in on the allowlist, or the
 * internal name of an array of one (`_int4`, `_text`: PostgreSQL names array types `_` + element).
 */
export function isAllowedType(names: readonly string[]): boolean {
  const name = names.length === 1 ? names[0] : names[0] === 'pg_catalog' ? names[1] : undefined
  if (name === undefined || names.length > 2) return false
  if (TYPE_ALLOWLIST.has(name)) return true
  const element = name.startsWith('_') ? name.slice(1) : undefined
  return element !== undefined && TYPE_ALLOWLIST.has(element) && !NO_ARRAY.has(element)
}

/** Allowed types without an array type. */
const NO_ARRAY = new Set(['void', 'unknown'])
