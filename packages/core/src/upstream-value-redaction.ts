import { writtenNames } from './analyze/written-names.js'
import { walkTree } from './ast/map-tree.js'
import type { Pg } from './ast/node.js'
import { parseSql } from './ast/parse.js'

/**
 * Whether an upstream error text may quote a value the statement read, rather than only what
 * the user wrote: a projection-constrained column may filter, so `WHERE ssn::int = 1` fails
 * with `invalid input syntax for type integer: "123-45-6789"`, and `chr(n)` with `requested
 * character too large for encoding: 1234567`. Fail closed: any double-quoted part that is not
 * a name or string literal of the statement, and any digit or single quote outside them,
 * counts as a value. `division by zero` or `integer out of range` stay as they are.
 */
export function quotesValue(text: string, originalSql: string): boolean {
  let written: ReadonlySet<string> | undefined
  let unknown = false
  const outside = text.replace(/"((?:[^"]|"")*)"/g, (_whole, inner: string) => {
    written ??= new Set([...writtenNames(originalSql), ...writtenLiterals(originalSql)])
    if (!written.has(inner.replace(/""/g, '"'))) unknown = true
    return ''
  })
  return unknown || /[\d']/.test(outside)
}

/** The string literals of a statement, as PostgreSQL reads them. */
function writtenLiterals(sql: string): string[] {
  const out: string[] = []
  try {
    for (const { stmt } of parseSql(sql)) {
      walkTree(stmt, (tag, body) => {
        const value = tag === 'A_Const' ? (body as Pg.A_Const).sval?.sval : undefined
        if (value !== undefined) out.push(value)
        return true
      })
    }
  } catch {
    // Text that does not parse wrote no literal.
  }
  return out
}
