import { ExpressionError } from '../errors.js'

/** `{user.<key>}` template variables (docs/policies.md#template-variables). */
const TEMPLATE = /\{user\.([A-Za-z_][A-Za-z0-9_]*)\}/y

/**
 * What `{column}` becomes in a mask expression: a column reference that the binder points at
 * the masked column itself, so one mask serves columns of any name (tag targets).
 */
export const MASKED_COLUMN = '_palisade_masked_column'

export interface Placeholders {
  /** The expression text with every template replaced by `$n`. */
  readonly text: string
  /** `$n` stands for `keys[n - 1]`. */
  readonly keys: readonly string[]
}

/**
 * Replaces `{user.key}` outside quoted strings and identifiers with `$n` parameters, so the
 * expression parses with the query-time parser and each variable later becomes a literal node.
 * Parameters written by hand are refused: only templates may stand for values.
 */
export function replaceTemplates(expression: string): Placeholders {
  const keys: string[] = []
  let out = ''
  let i = 0
  while (i < expression.length) {
    const ch = expression[i] as string
    if (ch === "'" || ch === '"') {
      const end = skipQuoted(expression, i, ch)
      out += expression.slice(i, end)
      i = end
    } else if (ch === '$' && /[0-9]/.test(expression[i + 1] ?? '')) {
      throw new ExpressionError('parameters ($n) are not allowed in policy expressions')
    } else if (ch === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(expression.slice(i))
      if (!tag) {
        out += ch
        i++
        continue
      }
      const close = expression.indexOf(tag[0], i + tag[0].length)
      const end = close < 0 ? expression.length : close + tag[0].length
      out += expression.slice(i, end)
      i = end
    } else if (expression.startsWith('{column}', i)) {
      out += MASKED_COLUMN
      i += '{column}'.length
    } else if (ch === '{') {
      TEMPLATE.lastIndex = i
      const match = TEMPLATE.exec(expression)
      if (!match)
        throw new ExpressionError(
          `invalid template variable at character ${i + 1}: use {user.<key>} or {column}`,
        )
      const key = match[1] as string
      let index = keys.indexOf(key)
      if (index < 0) index = keys.push(key) - 1
      out += `$${index + 1}`
      i += match[0].length
    } else {
      out += ch
      i++
    }
  }
  return { text: out, keys }
}

/** Index just past a quoted string or identifier starting at `start` (doubled quotes escape). */
function skipQuoted(text: string, start: number, quote: string): number {
  let i = start + 1
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) i += 2
      else return i + 1
    } else i++
  }
  return i
}
