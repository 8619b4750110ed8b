/**
 * Splits an object name as PostgreSQL's `reg*` input functions read it: dot-separated parts,
 * double-quoted parts kept verbatim (with `""` for a quote), unquoted parts folded to lower case.
 * Returns undefined for text that is not a well-formed name.
 */
export function parseQualifiedName(text: string): string[] | undefined {
  const parts: string[] = []
  let i = 0
  while (i <= text.length) {
    let part = ''
    if (text[i] === '"') {
      i++
      for (;;) {
        if (i >= text.length) return undefined
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            part += '"'
            i += 2
            continue
          }
          i++
          break
        }
        part += text[i]
        i++
      }
    } else {
      const start = i
      while (i < text.length && text[i] !== '.') i++
      part = text.slice(start, i).trim().toLowerCase()
    }
    if (part.length === 0) return undefined
    parts.push(part)
    if (i >= text.length) break
    if (text[i] !== '.') return undefined
    i++
  }
  return parts.length > 0 && parts.length <= 3 ? parts : undefined
}

/** Quotes an identifier for a `reg*` literal when it would not survive case folding. */
export function quoteName(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`
}
