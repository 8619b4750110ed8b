/**
 * Reading the expression strings of a PostgreSQL plan: a condition list prints as
 * `((a) AND (b))`, one condition as `(a)`.
 */

/** The top-level conjuncts of a plan condition. */
export function conjuncts(condition: string): string[] {
  const inner = isWrapped(condition) ? condition.slice(1, -1) : condition
  const parts = splitTopLevel(inner, ' AND ')
  return parts.length > 1 ? parts : [condition]
}

/** Conjuncts printed back as PostgreSQL prints a condition list. */
export function joinConjuncts(parts: readonly string[]): string {
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' AND ')})`
}

/**
 * A form for comparing expressions printed by PostgreSQL and by the deparser: lower case,
 * without casts, qualifiers, parentheses, quotes of names or spaces.
 */
export function normalizeExpression(text: string): string {
  return text
    .toLowerCase()
    .replace(CAST, '')
    .replace(QUALIFIER, '')
    .replace(/[()\s"]/g, '')
}

const CAST =
  /::(?:"[^"]*"|[a-z_][a-z0-9_]*)(?:\s+(?:varying|precision|with(?:out)?\s+time\s+zone))?(?:\([0-9, ]*\))?(?:\[\])*/g
const QUALIFIER = /(?:"[^"]*"|\b[a-z_][a-z0-9_$]*)\.(?=[a-z_"])/g

function isWrapped(text: string): boolean {
  if (!text.startsWith('(') || !text.endsWith(')')) return false
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quote) {
      if (c === quote) quote = undefined
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === '(') depth++
    else if (c === ')' && --depth === 0 && i < text.length - 1) return false
  }
  return depth === 0
}

function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = []
  let depth = 0
  let quote: string | undefined
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quote) {
      if (c === quote) quote = undefined
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === '(' || c === '[') depth++
    else if (c === ')' || c === ']') depth--
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i))
      start = i + separator.length
      i += separator.length - 1
    }
  }
  parts.push(text.slice(start))
  return parts
}
