import { walkTree } from '../ast/map-tree.js'
import { parseSql } from '../ast/parse.js'

/**
 * The identifiers a statement names, as PostgreSQL reads them: case-folded, quotes removed and
 * `U&"…"` escapes (with any UESCAPE) decoded. An upstream error quotes names in this form, so
 * this is how to tell a name the user wrote from one only a policy knows. String literals are
 * not names. Empty when the text does not parse.
 */
export function writtenNames(sql: string): ReadonlySet<string> {
  const names = new Set<string>()
  let parsed: ReturnType<typeof parseSql>
  try {
    parsed = parseSql(sql)
  } catch {
    return names
  }
  for (const { stmt } of parsed) {
    walkTree(stmt, (tag, body) => {
      if (tag === 'A_Const') return false
      if (tag === 'String' && typeof body['sval'] === 'string') names.add(body['sval'])
      for (const key of NAME_FIELDS) {
        const value = body[key]
        if (typeof value === 'string') names.add(value)
      }
      return true
    })
  }
  return names
}

/** Plain-string fields that hold identifiers (relation, schema and alias names). */
const NAME_FIELDS = ['relname', 'schemaname', 'catalogname', 'aliasname', 'name'] as const
