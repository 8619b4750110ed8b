import { loadModule, parseSync } from 'pgsql-parser'
import { BoundedCache } from '../bounded-cache.js'
import { isStackOverflow, SqlParseError, StackDepthError } from '../errors.js'
import { SqlState } from '../sqlstate.js'
import type { AstNode } from './node.js'

/** One parsed statement with its original text span. */
export interface ParsedStatement {
  readonly stmt: AstNode
  /** The statement's own text, as the client sent it. */
  readonly text: string
}

let loading: Promise<void> | undefined
let loaded = false

/** Loads the parser's WebAssembly module once; every sync parse needs it. */
export function loadParser(): Promise<void> {
  loading ??= loadModule().then(() => {
    loaded = true
  })
  return loading
}

const parseCache = new BoundedCache<string, readonly ParsedStatement[]>(2000)

/** Inputs longer than this are parsed every time instead of filling the cache. */
const MAX_CACHED_SQL_LENGTH = 16_384

/**
 * Parses SQL text into statements. Results are cached by text and must be treated as
 * immutable: transformers copy on write. Empty input (only whitespace, comments or `;`)
 * parses to no statements.
 */
export function parseSql(sql: string): readonly ParsedStatement[] {
  const cached = parseCache.get(sql)
  if (cached !== undefined) return cached
  const parsed = parseUncached(sql)
  if (sql.length <= MAX_CACHED_SQL_LENGTH) parseCache.set(sql, parsed)
  return parsed
}

function parseUncached(sql: string): readonly ParsedStatement[] {
  if (!loaded) throw new Error('the SQL parser is not loaded: await loadCore() first')
  let result: { stmts?: { stmt: AstNode; stmt_location?: number; stmt_len?: number }[] }
  try {
    result = parseSync(sql) as typeof result
  } catch (error) {
    if (isStackOverflow(error)) throw new StackDepthError()
    const parseError = toParseError(error, sql)
    // The parser refuses input that holds no statement; PostgreSQL answers it as empty.
    if (parseError.message === 'Query cannot be empty') return Object.freeze([])
    throw parseError
  }
  const stmts = result.stmts ?? []
  const only = stmts.length === 1 ? stmts[0] : undefined
  if (only) return Object.freeze([Object.freeze({ stmt: only.stmt, text: sql.trim() })])
  const bytes = Buffer.from(sql, 'utf8')
  return Object.freeze(
    (result.stmts ?? []).map((s) => {
      const start = s.stmt_location ?? 0
      const end = s.stmt_len ? start + s.stmt_len : bytes.length
      // Locations are byte offsets into the UTF-8 text.
      return Object.freeze({
        stmt: s.stmt,
        text: bytes.subarray(start, end).toString('utf8').trim(),
      })
    }),
  )
}

function toParseError(error: unknown, sql: string): SqlParseError {
  const details = (error as { sqlDetails?: { message?: string; cursorPosition?: number } })
    .sqlDetails
  const message =
    details?.message ?? (error instanceof Error ? error.message : 'syntax error in SQL statement')
  const position = details?.cursorPosition === undefined ? undefined : details.cursorPosition + 1
  return new SqlParseError(message, position, parseErrorCode(message, sql))
}

/**
 * An error PostgreSQL's lexer raises with a code other than 42601: a bad escape in an `E'…'`
 * string is 22025 (in a `U&'…'` string, with the same words, it is a syntax error).
 */
function parseErrorCode(message: string, sql: string): SqlState {
  if (message === 'invalid Unicode escape' && !/u&'/i.test(sql)) {
    return SqlState.InvalidEscapeSequence
  }
  return SqlState.SyntaxError
}
