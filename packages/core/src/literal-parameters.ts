/**
 * Literal parameters: a templated statement (literal-template.ts) whose number literals are sent
 * upstream as parameters of a prepared statement, so PostgreSQL parses and analyses each shape
 * once per upstream session instead of once per literal (docs/rewrite.md#literal-parameters).
 *
 * A number becomes a parameter only where that cannot change what PostgreSQL does with it:
 * - its type is the literal's own: an integer of up to nine digits is `int4` (it and its negation
 *   fit), a number with a point or an exponent is `numeric`; longer integers stay text (PostgreSQL
 *   types them by value: `int4`, `int8` or `numeric`, and `-2147483648` is an `int4`);
 * - never in a type modifier (`numeric(10, 2)`: PostgreSQL wants constants there) nor as a whole
 *   BY-list or DISTINCT ON item (a column position);
 * - strings stay text: an `unknown`-typed parameter is not an unknown literal everywhere
 *   (`$1 IS NULL` cannot be typed).
 */
import { walkTree } from './ast/map-tree.js'
import { type NodeBody, tagOf } from './ast/node.js'
import { parseSql } from './ast/parse.js'
import type { TextTemplate } from './literal-template.js'

/** PostgreSQL type OIDs of the parameters. */
const INT4 = 23
const NUMERIC = 1700

const SHORT_INTEGER = /^\d{1,9}$/
const DECIMAL = /^(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$/

/** The statement as an upstream prepared statement: its text, parameter types and values. */
export interface LiteralParameters {
  /** The rewritten SQL with `$1`, `$2`, ... where number literals were. */
  readonly sql: string
  /** One type OID per parameter. */
  readonly types: readonly number[]
  /** The literals' texts, bound in text format. */
  readonly values: readonly string[]
}

/** The parameter type a literal keeps its meaning with, or undefined (it stays in the text). */
export function literalParameterType(literal: string): number | undefined {
  if (SHORT_INTEGER.test(literal)) return INT4
  if (/[.eE]/.test(literal) && DECIMAL.test(literal)) return NUMERIC
  return undefined
}

/**
 * The `$n` of a rewritten template text (`n` counted from 1) that PostgreSQL must see as
 * constants; undefined when the text cannot be parsed (then no literal becomes a parameter).
 */
export function constantOnlyParameters(sql: string): ReadonlySet<number> | undefined {
  let statements: ReturnType<typeof parseSql>
  try {
    statements = parseSql(sql)
  } catch {
    return undefined
  }
  const constant = new Set<number>()
  const collect = (value: unknown) =>
    walkTree(value, (tag, body) => {
      if (tag === 'ParamRef') constant.add(Number(body['number']))
      return true
    })
  const collectPositions = (items: unknown) => {
    if (!Array.isArray(items)) return
    for (const item of items) if (tagOf(item) === 'ParamRef') collect(item)
  }
  // Every object, tagged or not: a TypeName inside a TypeCast or column definition is untagged.
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    const body = value as NodeBody
    if ('typmods' in body) collect(body['typmods'])
    const sortBy = body['SortBy'] as NodeBody | undefined
    if (sortBy && tagOf(sortBy['node']) === 'ParamRef') collect(sortBy['node'])
    const select = body['SelectStmt'] as NodeBody | undefined
    if (select) {
      collectPositions(select['groupClause'])
      collectPositions(select['distinctClause'])
    }
    for (const key in body) visit(body[key])
  }
  visit(statements.map((s) => s.stmt))
  return constant
}

/**
 * The statement of `template` filled with `literals`, its numbers as parameters; undefined when
 * none can be one. Literals that cannot stay in the text, so the text (and the upstream
 * statement) changes with them.
 */
export function literalParameters(
  template: TextTemplate,
  constantOnly: ReadonlySet<number>,
  literals: readonly string[],
): LiteralParameters | undefined {
  let numbers: Map<number, number> | undefined
  const types: number[] = []
  const values: string[] = []
  const { slots } = template
  let every = true
  for (let i = 0; i < slots.length; i++) {
    const index = slots[i] as number
    if (numbers?.has(index)) continue
    const type = constantOnly.has(index + 1)
      ? undefined
      : literalParameterType(literals[index] as string)
    if (type === undefined) {
      every = false
      continue
    }
    types.push(type)
    values.push(literals[index] as string)
    numbers ??= new Map()
    numbers.set(index, types.length)
  }
  if (!numbers) return undefined
  // Every literal a parameter (the usual case): the text is the template's own, one string for
  // every execution, so the maps keyed by it upstream hash it once.
  let sql = every ? allParameterTexts.get(template) : undefined
  if (sql === undefined) {
    sql = parameterText(template, numbers, literals)
    if (every) allParameterTexts.set(template, sql)
  }
  return { sql, types, values }
}

/** The text of templates whose literals all became parameters. */
const allParameterTexts = new WeakMap<TextTemplate, string>()

/** The template's text with `$n` for the literals numbered in `numbers`, the others as written. */
function parameterText(
  template: TextTemplate,
  numbers: ReadonlyMap<number, number>,
  literals: readonly string[],
): string {
  const { pieces, slots } = template
  let sql = pieces[0] as string
  for (let i = 0; i < slots.length; i++) {
    const index = slots[i] as number
    const number = numbers.get(index)
    sql += (number === undefined ? literals[index] : `$${number}`) + (pieces[i + 1] as string)
  }
  return sql
}
