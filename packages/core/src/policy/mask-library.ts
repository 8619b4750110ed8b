import { mapTree, walkTree } from '../ast/map-tree.js'
import { type AstNode, type Pg, stringsOf } from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import { nodeBody } from '../ast/tag-dispatch.js'
import { AccessRulesError, ExpressionError } from '../errors.js'

/**
 * The masking library (docs/policies.md, "Named masks"): `mask.<name>(…)` calls in a
 * `mask_expression`, expanded into plain PostgreSQL expressions when the mask is bound to a
 * column, so the upstream needs no extension. Every result is cast to the masked column's own
 * type, which is why each mask says which column types it can produce.
 */

/** The schema that names library masks in expressions: `mask.partial(email, 1, 0)`. */
export const MASK_SCHEMA = 'mask'

type ColumnKind = 'text' | 'temporal' | 'numeric' | 'any'

/** A literal argument's expected kind. */
type ArgKind = 'nonnegative integer' | 'positive number' | 'unit' | 'fill character' | 'value'

interface MaskDefinition {
  /** Literal arguments after the first (the masked value); optional ones are trailing. */
  readonly args: readonly ArgKind[]
  readonly required: number
  /** Whether the first argument is the value to mask (false: the mask takes none). */
  readonly takesValue: boolean
  /** Which column types can carry the result. */
  readonly column: ColumnKind
  /** SQL of the masked value: `v` is the value's SQL, `a` the literal arguments' SQL. */
  expand(v: string, a: readonly string[], key: string | undefined): string
}

const TEXT_TYPES =
  /^(text|character varying(\(\d+\))?|character(\(\d+\))?|varchar(\(\d+\))?|bpchar|name|citext)$/
const TEMPORAL_TYPES =
  /^(date|timestamp( without time zone)?|timestamp with time zone|timestamptz|timestamp\(\d\)( with(out)? time zone)?)$/
const NUMERIC_TYPES =
  /^(smallint|integer|bigint|int2|int4|int8|real|double precision|float4|float8|numeric(\(\d+(,\s*\d+)?\))?|decimal(\(\d+(,\s*\d+)?\))?|money)$/

const KIND_NAMES: Record<ColumnKind, string> = {
  text: 'a text column',
  temporal: 'a date or timestamp column',
  numeric: 'a numeric column',
  any: 'any column',
}

const nullSafe = (v: string, body: string) => `CASE WHEN ${v} IS NULL THEN NULL ELSE ${body} END`

const LIBRARY: Readonly<Record<string, MaskDefinition>> = {
  // Keeps the first `first` and last `last` characters; the rest become the fill character.
  partial: {
    args: ['nonnegative integer', 'nonnegative integer', 'fill character'],
    required: 2,
    takesValue: true,
    column: 'text',
    expand: (v, [first, last, fill = "'*'"]) =>
      nullSafe(
        v,
        `CASE WHEN length(${v}) <= ${first} + ${last} THEN repeat(${fill}, length(${v})) ` +
          `ELSE left(${v}, ${first}) || repeat(${fill}, length(${v}) - ${first} - ${last}) || right(${v}, ${last}) END`,
      ),
  },
  // Hides the local part of an email address and keeps its domain.
  email: {
    args: [],
    required: 0,
    takesValue: true,
    column: 'text',
    expand: (v) =>
      nullSafe(
        v,
        `CASE WHEN strpos(${v}, '@') = 0 THEN '***' ELSE '***' || substr(${v}, strpos(${v}, '@')) END`,
      ),
  },
  // Replaces every digit with the fill character (default 0), keeping separators and letters.
  digits: {
    args: ['fill character'],
    required: 0,
    takesValue: true,
    column: 'text',
    expand: (v, [fill = "'0'"]) => `translate(${v}, '0123456789', repeat(${fill}, 10))`,
  },
  // Truncates a date or timestamp to its year or month.
  truncate: {
    args: ['unit'],
    required: 1,
    takesValue: true,
    column: 'temporal',
    expand: (v, [unit]) => `date_trunc(${unit}, ${v})`,
  },
  // Rounds a number down to a multiple of the width: bucket(salary, 10000).
  bucket: {
    args: ['positive number'],
    required: 1,
    takesValue: true,
    column: 'numeric',
    expand: (v, [width]) => `floor(CAST(${v} AS numeric) / ${width}) * ${width}`,
  },
  // A fixed value for every row (NULL stays NULL).
  constant: {
    args: ['value'],
    required: 1,
    takesValue: false,
    column: 'any',
    expand: (_v, [value]) => value as string,
  },
  null: {
    args: [],
    required: 0,
    takesValue: false,
    column: 'any',
    expand: () => 'NULL',
  },
  // Deterministic within one datasource (joins and GROUP BY still work), keyed per datasource.
  hash: {
    args: [],
    required: 0,
    takesValue: true,
    column: 'text',
    expand: (v, _a, key) => {
      if (!key) throw new AccessRulesError('keyed hash masks need the datasource mask key')
      // The key on both sides of the value: sha256 alone would allow length extension.
      return nullSafe(
        v,
        `encode(sha256(convert_to('${key}' || CAST(${v} AS text) || '${key}', 'UTF8')), 'hex')`,
      )
    },
  },
}

/** The names the library offers, for messages and docs. */
export const MASK_NAMES = Object.keys(LIBRARY)

function definitionOf(call: Pg.FuncCall): { name: string; definition: MaskDefinition } | undefined {
  const names = stringsOf(call.funcname)
  if (names.length !== 2 || names[0] !== MASK_SCHEMA) return undefined
  const name = names[1] as string
  const definition = LIBRARY[name]
  if (!definition) {
    throw new ExpressionError(
      `mask.${name} is not a library mask; use one of ${MASK_NAMES.map((n) => `mask.${n}`).join(', ')}`,
    )
  }
  return { name, definition }
}

/** A literal's value, or undefined when the node is not a plain constant. */
function literalOf(
  node: AstNode | undefined,
): { kind: 'int' | 'float' | 'string' | 'bool' | 'null'; value: string } | undefined {
  const body = nodeBody(node, 'A_Const')
  if (!body) return undefined
  if (body.isnull) return { kind: 'null', value: 'NULL' }
  if (body.ival !== undefined) return { kind: 'int', value: String(body.ival.ival ?? 0) }
  if (body.fval !== undefined) return { kind: 'float', value: String(body.fval.fval) }
  if (body.sval !== undefined) return { kind: 'string', value: String(body.sval.sval ?? '') }
  if (body.boolval !== undefined)
    return { kind: 'bool', value: String(body.boolval.boolval ?? false) }
  return undefined
}

function checkArgument(name: string, position: number, kind: ArgKind, node: AstNode): void {
  const where = `argument ${position} of mask.${name}`
  if (kind === 'value') {
    const param = (node as { ParamRef?: unknown }).ParamRef
    if (!param && !literalOf(node))
      throw new ExpressionError(`${where} must be a literal or a {user.*} value`)
    return
  }
  const literal = literalOf(node)
  const fail = (what: string) => new ExpressionError(`${where} must be ${what}`)
  switch (kind) {
    case 'nonnegative integer':
      if (literal?.kind !== 'int' || Number(literal.value) < 0 || Number(literal.value) > 10_000)
        throw fail('an integer from 0 to 10000')
      return
    case 'positive number':
      if (
        (literal?.kind !== 'int' && literal?.kind !== 'float') ||
        !(Number(literal.value) > 0) ||
        !Number.isFinite(Number(literal.value))
      )
        throw fail('a number greater than 0')
      return
    case 'unit':
      if (literal?.kind !== 'string' || !['year', 'month', 'day', 'hour'].includes(literal.value))
        throw fail("'year', 'month', 'day' or 'hour'")
      return
    case 'fill character':
      if (literal?.kind !== 'string' || [...literal.value].length !== 1)
        throw fail('a one-character string')
      return
  }
}

/**
 * Checks a `mask.*` call at save time: a known name, the argument count and each literal
 * argument's kind. Returns false for any other function (the allowlist decides those).
 */
export function checkMaskCall(call: Pg.FuncCall): boolean {
  const found = definitionOf(call)
  if (!found) return false
  const { name, definition } = found
  const args = (call.args ?? []) as AstNode[]
  const offset = definition.takesValue ? 1 : 0
  const literals = args.slice(offset)
  if (
    (definition.takesValue && args.length === 0) ||
    literals.length < definition.required ||
    literals.length > definition.args.length
  ) {
    const counts =
      definition.required === definition.args.length
        ? `${definition.args.length}`
        : `${definition.required} to ${definition.args.length}`
    throw new ExpressionError(
      `mask.${name} takes ${definition.takesValue ? 'the value to mask and ' : ''}${counts} argument${definition.args.length === 1 ? '' : 's'}`,
    )
  }
  literals.forEach((node, i) => {
    checkArgument(name, i + 1 + offset, definition.args[i] as ArgKind, node)
  })
  if (call.agg_star || call.agg_distinct || call.over || call.agg_order) {
    throw new ExpressionError(`mask.${name} is a plain function call`)
  }
  return true
}

/** The library masks an expression calls, by name. */
export function maskCallsOf(node: AstNode): string[] {
  const found = new Set<string>()
  walkTree(node, (tag, body) => {
    if (tag === 'FuncCall') {
      const names = stringsOf((body as Pg.FuncCall).funcname)
      if (names.length === 2 && names[0] === MASK_SCHEMA) found.add(names[1] as string)
    }
    return true
  })
  return [...found]
}

/**
 * Why a library mask cannot produce values of `columnType` (PostgreSQL's `format_type` text),
 * or undefined when every library mask the expression calls can.
 */
export function maskTypeProblem(
  maskNames: readonly string[],
  columnType: string,
): string | undefined {
  const type = columnType.trim().toLowerCase()
  for (const name of maskNames) {
    const kind = LIBRARY[name]?.column
    if (!kind || kind === 'any') continue
    const fits =
      kind === 'text'
        ? TEXT_TYPES.test(type)
        : kind === 'temporal'
          ? TEMPORAL_TYPES.test(type)
          : NUMERIC_TYPES.test(type)
    if (!fits) return `mask.${name} needs ${KIND_NAMES[kind]}, not ${columnType}`
  }
  return undefined
}

/**
 * Replaces each `mask.*` call of a bound mask with its PostgreSQL expression, cast to the
 * column's type. `key` is the datasource's mask key (keyed hash); a call whose result the
 * column cannot carry fails closed, so the column is never shown unmasked.
 */
export function expandMaskCalls(
  node: AstNode,
  column: { name: string; type: string },
  key: string | undefined,
  toSql: (node: AstNode) => string,
): AstNode {
  return mapTree(node, (_n, tag, body) => {
    if (tag !== 'FuncCall') return undefined
    const found = definitionOf(body as Pg.FuncCall)
    if (!found) return undefined
    const { name, definition } = found
    const problem = maskTypeProblem([name], column.type)
    if (problem)
      throw new AccessRulesError(`mask on column "${column.name}" is invalid: ${problem}`)
    // Inner library calls first: mask.partial(mask.digits(phone), 0, 4) nests as written.
    const args = (((body as Pg.FuncCall).args ?? []) as AstNode[]).map((a) =>
      expandMaskCalls(a, column, key, toSql),
    )
    const offset = definition.takesValue ? 1 : 0
    const value = definition.takesValue ? `(${toSql(args[0] as AstNode)})` : ''
    const literals = args.slice(offset).map((a) => toSql(a))
    const sql = `CAST((${definition.expand(value, literals, key)}) AS ${column.type})`
    return parseExpression(sql)
  })
}

function parseExpression(sql: string): AstNode {
  const [statement] = parseSql(`SELECT ${sql}`)
  const select = nodeBody(statement?.stmt, 'SelectStmt')
  const target = nodeBody(select?.targetList?.[0], 'ResTarget')
  if (!target?.val) throw new AccessRulesError('a library mask did not expand')
  return target.val as AstNode
}
