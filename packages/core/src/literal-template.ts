/**
 * Rewrite templates: statements that differ only in their literals (`WHERE id = 41`, `WHERE id =
 * 42`: how psql, psycopg2 and BI tools send SQL) share one rewrite. The literals are cut out
 * of the text with a small lexer, the text with `$n` in their places is the template's key,
 * and a cache hit costs the lexing and a string join instead of parse, analysis, rewrite and
 * deparse. The upstream still receives the literals, so PostgreSQL types and plans them as it
 * would the client's own statement.
 *
 * A template is only made when that is provably harmless for the first statement that makes
 * it: the rewrite of the `$n` text, with the literals put back, must equal the rewrite of the
 * statement itself, or the key is marked as never templated. Literals are only cut where a
 * value cannot change what the rewrite does: never in a BY list or DISTINCT ON (an integer
 * there is a column position), never a prefixed string (`E'…'`, `B'…'`, `date '…'`), and not
 * at all in text with `$` (parameters, dollar quotes).
 */

/** Where a literal sits in a text. */
interface Span {
  readonly start: number
  readonly end: number
}

/** A text cut into fixed pieces and numbered slots: piece, slot, piece, slot, ..., piece. */
export interface TextTemplate {
  readonly pieces: readonly string[]
  /** For each slot, the 0-based literal that fills it. */
  readonly slots: readonly number[]
}

/** Previous tokens after which a literal is an ordinary value. */
const VALUE_KEYWORDS = new Set([
  'select',
  'where',
  'and',
  'or',
  'not',
  'in',
  'between',
  'like',
  'ilike',
  'when',
  'then',
  'else',
  'having',
  'limit',
  'offset',
  'on',
])
/** Keywords that end a BY list at its own depth. */
const CLAUSE_KEYWORDS = new Set([
  'limit',
  'offset',
  'fetch',
  'for',
  'union',
  'intersect',
  'except',
  'having',
  'window',
  'where',
  'from',
  'select',
  'range',
  'rows',
  'groups',
])
/** Punctuation after which a literal is an ordinary value. */
const VALUE_PUNCTUATION = new Set(['=', '<', '>', '(', ',', '+', '-', '*', '/', '%', '[', '|'])

const isDigit = (c: number) => c >= 48 && c <= 57
const isIdentStart = (c: number) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 128
const isIdentPart = (c: number) => isIdentStart(c) || isDigit(c) || c === 36

/**
 * The literals of `sql` that can be cut out, or undefined when the text is not templated at all.
 * Also returns the positions of `$n` parameters when `parameters` is set (for rewritten SQL).
 */
function scan(sql: string, parameters: boolean): { literals: Span[]; params: Span[] } | undefined {
  const literals: Span[] = []
  const params: Span[] = []
  let prev = ''
  let depth = 0
  /** Depths at which a BY list or DISTINCT ON is open: no integer is cut there or deeper. */
  let positional = -1
  let distinct = false
  const n = sql.length
  let i = 0
  const take = (span: Span) => {
    if (positional < 0 && (VALUE_PUNCTUATION.has(prev) || VALUE_KEYWORDS.has(prev))) {
      literals.push(span)
    }
  }
  while (i < n) {
    const c = sql.charCodeAt(i)
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) {
      i++
    } else if (c === 45 && sql.charCodeAt(i + 1) === 45) {
      const end = sql.indexOf('\n', i)
      i = end < 0 ? n : end + 1
    } else if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      let nesting = 1
      i += 2
      while (i < n && nesting > 0) {
        if (sql.charCodeAt(i) === 47 && sql.charCodeAt(i + 1) === 42) {
          nesting++
          i += 2
        } else if (sql.charCodeAt(i) === 42 && sql.charCodeAt(i + 1) === 47) {
          nesting--
          i += 2
        } else i++
      }
      if (nesting > 0) return undefined
    } else if (c === 39) {
      // A prefixed string (E'', B'', X'', N'', U&'') or `type 'text'` is not cut: bail on the
      // first, skip the second.
      if (i > 0 && isIdentPart(sql.charCodeAt(i - 1))) return undefined
      const start = i
      i++
      for (;;) {
        const q = sql.indexOf("'", i)
        if (q < 0) return undefined
        if (sql.charCodeAt(q + 1) === 39) i = q + 2
        else {
          i = q + 1
          break
        }
      }
      if (prev !== 'ident') take({ start, end: i })
      prev = 'literal'
    } else if (c === 34) {
      const start = i
      i++
      for (;;) {
        const q = sql.indexOf('"', i)
        if (q < 0) return undefined
        if (sql.charCodeAt(q + 1) === 34) i = q + 2
        else {
          i = q + 1
          break
        }
      }
      if (sql.slice(start, i).includes('$')) return undefined
      prev = 'ident'
    } else if (isDigit(c) || (c === 46 && isDigit(sql.charCodeAt(i + 1)))) {
      const start = i
      while (isDigit(sql.charCodeAt(i))) i++
      if (sql.charCodeAt(i) === 46 && sql.charCodeAt(i + 1) !== 46) {
        i++
        while (isDigit(sql.charCodeAt(i))) i++
      }
      const e = sql.charCodeAt(i)
      if (e === 69 || e === 101) {
        let j = i + 1
        if (sql.charCodeAt(j) === 43 || sql.charCodeAt(j) === 45) j++
        if (isDigit(sql.charCodeAt(j))) {
          i = j
          while (isDigit(sql.charCodeAt(i))) i++
        }
      }
      // 0x1F, 1_000, 12abc: not a plain number.
      if (isIdentPart(sql.charCodeAt(i)) || sql.charCodeAt(i) === 46) return undefined
      take({ start, end: i })
      prev = 'literal'
    } else if (c === 36) {
      if (!parameters) return undefined
      const start = i
      i++
      while (isDigit(sql.charCodeAt(i))) i++
      if (i === start + 1 || isIdentPart(sql.charCodeAt(i))) return undefined
      params.push({ start, end: i })
      prev = 'literal'
    } else if (isIdentStart(c)) {
      const start = i
      while (i < n && isIdentPart(sql.charCodeAt(i))) i++
      const word = sql.slice(start, i).toLowerCase()
      if (word.includes('$')) return undefined
      if (word === 'by' || (word === 'on' && prev === 'distinct')) {
        if (positional < 0) positional = depth
        distinct = word === 'on'
      } else if (positional >= 0 && depth === positional && CLAUSE_KEYWORDS.has(word)) {
        positional = -1
      }
      prev = VALUE_KEYWORDS.has(word) || word === 'distinct' || word === 'by' ? word : 'ident'
    } else {
      const ch = sql[i] as string
      if (ch === '(') depth++
      else if (ch === ')') {
        depth--
        // DISTINCT ON (...) ends with its parenthesis; a BY list ends with its subquery's.
        if (positional >= 0 && (depth < positional || (distinct && depth === positional))) {
          positional = -1
          distinct = false
        }
      } else if (ch === ';' && depth === 0) positional = -1
      prev = ch === ':' && sql[i + 1] === ':' ? '::' : ch
      i += ch === ':' && sql[i + 1] === ':' ? 2 : 1
    }
  }
  return { literals, params }
}

/** The template key of `sql` (its literals replaced by `$1`, `$2`, ...) and the literals. */
export function cutLiterals(sql: string): { key: string; literals: string[] } | undefined {
  const scanned = scan(sql, false)
  if (!scanned || scanned.literals.length === 0) return undefined
  const literals: string[] = []
  let key = ''
  let at = 0
  for (const span of scanned.literals) {
    key += `${sql.slice(at, span.start)}$${literals.length + 1}`
    literals.push(sql.slice(span.start, span.end))
    at = span.end
  }
  return { key: key + sql.slice(at), literals }
}

/**
 * `text` (the rewrite of a key, or a statement of it) as pieces around its `$n` parameters, or
 * undefined when it cannot be read safely or refers to a parameter beyond `count`.
 */
export function textTemplate(text: string, count: number): TextTemplate | undefined {
  const scanned = scan(text, true)
  if (!scanned) return undefined
  const pieces: string[] = []
  const slots: number[] = []
  let at = 0
  for (const span of scanned.params) {
    const number = Number(text.slice(span.start + 1, span.end))
    if (number < 1 || number > count) return undefined
    pieces.push(text.slice(at, span.start))
    slots.push(number - 1)
    at = span.end
  }
  pieces.push(text.slice(at))
  return { pieces, slots }
}

/** The text of a template with `literals` in its slots. */
export function fillTemplate(template: TextTemplate, literals: readonly string[]): string {
  const { pieces, slots } = template
  let out = pieces[0] as string
  for (let i = 0; i < slots.length; i++) {
    out += (literals[slots[i] as number] as string) + (pieces[i + 1] as string)
  }
  return out
}
