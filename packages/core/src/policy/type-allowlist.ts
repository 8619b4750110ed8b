/**
 * Built-in types a query may name in casts and column definitions, generated from pg_type
 * (builtins.generated.ts): every type of `pg_catalog` (arrays included) but the row types of
 * the catalogs and the object-identifier types, which have their own guard, plus the domains of
 * `information_schema` written qualified. Any other type name, in particular the row type
 * every table has, is answered as missing: `NULL::secrets` would otherwise probe whether a
 * hidden table exists, and `NULL::customers` would list a table's denied columns. Extension
 * and user-defined types in the upstream are refused the same way.
 */
import { INFORMATION_SCHEMA_TYPE_NAMES, TYPE_NAMES } from './builtins.generated.js'
import { wordSet } from './function-allowlist.js'

/** SQL spellings the parser may leave as a plain type name. */
const SQL_TYPE_SPELLINGS = 'int integer smallint bigint boolean real float decimal character'

export const TYPE_ALLOWLIST: ReadonlySet<string> = wordSet(`${TYPE_NAMES} ${SQL_TYPE_SPELLINGS}`)

const INFORMATION_SCHEMA_TYPES = wordSet(INFORMATION_SCHEMA_TYPE_NAMES)

/** Whether a type name (optionally `pg_catalog`-qualified) is an allowed built-in. */
export function isAllowedType(names: readonly string[]): boolean {
  if (names.length === 1) return TYPE_ALLOWLIST.has(names[0] as string)
  if (names.length !== 2) return false
  const [schema, name] = names as [string, string]
  if (schema === 'pg_catalog') return TYPE_ALLOWLIST.has(name)
  return schema === 'information_schema' && INFORMATION_SCHEMA_TYPES.has(name)
}
