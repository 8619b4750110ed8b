import { walkTree } from '../ast/map-tree.js'
import { type AstNode, type NodeBody, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { nodeBody } from '../ast/tag-dispatch.js'
import { pgCatalogKeyType } from './pg-catalog.js'

/**
 * Whether a catalog statement lists objects wholesale (every column of a schema, every table)
 * rather than naming a few. A join key to a relation on the left makes a catalog fence LATERAL,
 * looked up once per left row: right for a statement about one table, where the left holds a
 * row or two, but at 100,000 columns each lookup's fixed cost adds up to more than computing
 * the visible set once and letting PostgreSQL join it by hash (catalog-guard-pass.ts).
 *
 * A statement names few objects when it compares an object's key or name with a value
 * (`c.oid = '16390'`, `attrelid = $1`, `c.relname = 't1'`, `relname LIKE 'orders%'`, psql's
 * `relname ~ '^(t1)$'`); a pattern with no literal character (`LIKE '%'`, `~ '^(.*)$'`)
 * names none, and neither does an outer join's condition. Wrongly taken for naming few, a
 * statement keeps the per-row lookups.
 */
export function listsCatalogWholesale(query: AstNode): boolean {
  let names = false
  const visit = (tag: string, body: NodeBody): boolean => {
    if (names) return false
    if (tag === 'A_Expr' && namesFew(body as Pg.A_Expr)) names = true
    const join = tag === 'JoinExpr' ? (body as Pg.JoinExpr) : undefined
    if (join && join.jointype !== 'JOIN_INNER') {
      // An outer join's condition picks the rows it adds (`LEFT JOIN pg_class dc ON dc.oid =
      // d.classoid AND dc.relname = 'pg_class'`), not the rows the statement lists.
      walkTree(join.larg, visit)
      walkTree(join.rarg, visit)
      return false
    }
    return !names
  }
  walkTree(query, visit)
  return !names
}

/**
 * OID keys (pg-catalog.ts) whose value picks out a schema's or a catalog's worth of objects, not
 * one: every other OID key names one object.
 */
const WHOLESALE_KEYS = new Set(['relnamespace', 'typnamespace', 'pronamespace', 'classoid'])
const isObjectKey = (column: string) =>
  pgCatalogKeyType(column) === 'oid' && !WHOLESALE_KEYS.has(column)

/** Names of one object each (per schema). */
const OBJECT_NAMES = new Set(['relname', 'typname', 'proname', 'conname'])

const EQUALITIES = new Set(['='])
const LIKES = new Set(['~~', '~~*'])
const REGEXES = new Set(['~', '~*'])
/** `=`, `IN (…)`, `= ANY (…)`, LIKE, ILIKE and SIMILAR TO (a `~` on its pattern). */
const COMPARISON_KINDS = new Set<Pg.A_Expr['kind']>([
  'AEXPR_OP',
  'AEXPR_IN',
  'AEXPR_OP_ANY',
  'AEXPR_LIKE',
  'AEXPR_ILIKE',
  'AEXPR_SIMILAR',
])

function namesFew(expr: Pg.A_Expr): boolean {
  const operator = stringsOf(expr.name).at(-1) ?? ''
  const kind = expr.kind
  // Only a match names: `NOT LIKE 'pg_%'`, `!~ '^pg_'` and `<>` exclude a few.
  const matches = EQUALITIES.has(operator) || LIKES.has(operator) || REGEXES.has(operator)
  if (!matches || !COMPARISON_KINDS.has(kind)) return false
  for (const [mine, theirs] of [
    [expr.lexpr, expr.rexpr],
    [expr.rexpr, expr.lexpr],
  ] as const) {
    const column = columnName(mine as AstNode)
    if (column === undefined || theirs === undefined || readsColumns(theirs)) continue
    if (isObjectKey(column) && EQUALITIES.has(operator)) return true
    if (!OBJECT_NAMES.has(column)) continue
    const pattern = stringConstant(theirs as AstNode)
    if (pattern === undefined || EQUALITIES.has(operator)) return true
    if (hasLiteral(pattern, LIKES.has(operator))) return true
  }
  return false
}

/** The column an operand names, under casts and COLLATE (`c.relname::text`). */
function columnName(node: AstNode | undefined): string | undefined {
  return stringsOf(nodeBody(uncast(node), 'ColumnRef')?.fields).at(-1)
}

/** An operand without the casts and COLLATE around it. */
function uncast(node: AstNode | undefined): AstNode | undefined {
  const tag = tagOf(node)
  if (tag === 'TypeCast') return uncast(nodeBody(node, 'TypeCast')?.arg as AstNode)
  if (tag === 'CollateClause') return uncast(nodeBody(node, 'CollateClause')?.arg as AstNode)
  return node
}

/** Whether an expression reads a column (then it is a join, not a value). */
function readsColumns(node: unknown): boolean {
  let reads = false
  walkTree(node, (tag) => {
    if (tag === 'ColumnRef') reads = true
    return !reads
  })
  return reads
}

/** The string a constant (under casts and COLLATE) holds, or undefined for anything else. */
function stringConstant(node: AstNode): string | undefined {
  return nodeBody(uncast(node), 'A_Const')?.sval?.sval
}

/** Whether a LIKE or regular-expression pattern holds a character that must match itself. */
function hasLiteral(pattern: string, like: boolean): boolean {
  const wildcards = like ? /[%_]/g : /[\^$().*+?|[\]{}\\]/g
  return pattern.replace(wildcards, '').length > 0
}
