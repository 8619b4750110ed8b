// Long lists travel to the database as one JSON value, not as one parameter per item.
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm'

/** `column IN (ids)`, the ids sent as one JSON array (thousands of them are one parameter). */
export function idIn(column: SQLWrapper, ids: readonly string[]): SQL {
  return sql`${column} IN (SELECT value::uuid FROM json_array_elements_text(${JSON.stringify(ids)}::json))`
}

/** One JSON parameter holding rows for `json_to_recordset`. */
export function jsonRows(rows: readonly object[]): SQL {
  return sql`${JSON.stringify(rows)}::json`
}
