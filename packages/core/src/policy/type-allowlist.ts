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

/** Whether a type name (optionally `pg_catalog`-qualified) is a built-in on the allowlist. */
export function isAllowedType(names: readonly string[]): boolean {
  if (names.length === 1) return TYPE_ALLOWLIST.has(names[0] as string)
  if (names.length === 2 && names[0] === 'pg_catalog') return TYPE_ALLOWLIST.has(names[1] as string)
  return false
}
