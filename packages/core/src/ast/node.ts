/**
 * Thin types and builders over the parser's JSON AST. Everything else in core imports the
 * AST through this file, so the parser's shape is named in one place.
 * A node is a one-key object `{ Tag: body }`; bodies are plain objects and never mutated.
 */
import type * as Pg from '@pgsql/types'

export type { Pg }

/** Any AST node: a one-key object whose key is the node tag. */
export type AstNode = Pg.Node
/** A node body, loosely typed for generic walks. */
export type NodeBody = Record<string, unknown>

/** The tag of a node (`'SelectStmt'`, `'RangeVar'`, ...), or undefined for non-nodes. */
export function tagOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  for (const key in value) {
    const first = key.charCodeAt(0)
    // Node tags are PascalCase; body fields are snake/camelCase.
    return first >= 65 && first <= 90 ? key : undefined
  }
  return undefined
}

/** The body of a node with the given tag, or undefined. */
export function bodyOf<T>(node: unknown, tag: string): T | undefined {
  if (node === null || typeof node !== 'object') return undefined
  return (node as Record<string, T>)[tag]
}

export function stringNode(sval: string): AstNode {
  return { String: { sval } }
}

/** The string values of a list of `String` nodes, e.g. a function name or a column reference. */
export function stringsOf(list: readonly unknown[] | undefined): string[] {
  const out: string[] = []
  for (const item of list ?? []) {
    const s = bodyOf<Pg.String>(item, 'String')
    if (s?.sval !== undefined) out.push(s.sval)
    else if (bodyOf(item, 'A_Star') !== undefined) out.push('*')
  }
  return out
}

export function columnRef(...names: string[]): AstNode {
  return { ColumnRef: { fields: names.map(stringNode) } }
}

export function stringConst(value: string): AstNode {
  return { A_Const: { sval: { sval: value } } }
}

export function nullConst(): AstNode {
  return { A_Const: { isnull: true } }
}

export function boolConst(value: boolean): AstNode {
  return { A_Const: { boolval: { boolval: value } } }
}

/** An integer or numeric literal; values outside int32 travel as numeric text, as the parser does. */
export function numberConst(value: number | bigint | string): AstNode {
  const text = String(value)
  const n = Number(text)
  if (Number.isInteger(n) && n >= -2147483648 && n <= 2147483647) {
    return { A_Const: { ival: { ival: n } } }
  }
  return { A_Const: { fval: { fval: text } } }
}

/** `arg::type`; a qualified type is given as its name parts, e.g. `['pg_catalog', 'oid']`. */
export function typeCast(
  arg: AstNode,
  typeName: string | readonly string[],
  arrayBounds = false,
): AstNode {
  const names = typeof typeName === 'string' ? [typeName] : typeName
  return {
    TypeCast: {
      arg,
      typeName: {
        names: names.map(stringNode),
        typemod: -1,
        ...(arrayBounds ? { arrayBounds: [{ Integer: { ival: -1 } }] } : {}),
      },
    },
  }
}

/** `a AND b AND ...`, flattening nested ANDs; undefined when there is nothing to combine. */
export function and(...args: (AstNode | undefined)[]): AstNode | undefined {
  const parts: AstNode[] = []
  for (const arg of args) {
    if (arg === undefined) continue
    const bool = bodyOf<Pg.BoolExpr>(arg, 'BoolExpr')
    if (bool?.boolop === 'AND_EXPR') parts.push(...((bool.args ?? []) as AstNode[]))
    else parts.push(arg)
  }
  if (parts.length === 0) return undefined
  if (parts.length === 1) return parts[0]
  return { BoolExpr: { boolop: 'AND_EXPR', args: parts } }
}

export function binaryOp(op: string, lexpr: AstNode, rexpr: AstNode): AstNode {
  return { A_Expr: { kind: 'AEXPR_OP', name: [stringNode(op)], lexpr, rexpr } }
}

/** `lexpr OPERATOR(pg_catalog.op) rexpr`: the built-in operator, whatever the search path. */
export function builtinOp(op: string, lexpr: AstNode, rexpr: AstNode): AstNode {
  return {
    A_Expr: { kind: 'AEXPR_OP', name: [stringNode('pg_catalog'), stringNode(op)], lexpr, rexpr },
  }
}

/** `lexpr OPERATOR(pg_catalog.=) rexpr`: the built-in equality, whatever the search path. */
export function builtinEquals(lexpr: AstNode, rexpr: AstNode): AstNode {
  return builtinOp('=', lexpr, rexpr)
}

export function resTarget(val: AstNode, name?: string): AstNode {
  return { ResTarget: name === undefined ? { val } : { name, val } }
}

export function rangeVar(schemaname: string, relname: string, alias?: string): AstNode {
  return {
    RangeVar: {
      schemaname,
      relname,
      inh: true,
      relpersistence: 'p',
      ...(alias === undefined ? {} : { alias: { aliasname: alias } }),
    },
  }
}

/** `(subquery) AS alias`: the derived table that replaces a scan. */
export function rangeSubselect(subquery: AstNode, alias: Pg.Alias, lateral = false): AstNode {
  return { RangeSubselect: lateral ? { lateral, subquery, alias } : { subquery, alias } }
}

export interface SimpleSelect {
  targets: AstNode[]
  from: AstNode[]
  where?: AstNode | undefined
  /** Adds `OFFSET 0`: an optimization fence PostgreSQL will not push outer quals through. */
  fence?: boolean
}

export function selectStmt(select: SimpleSelect): AstNode {
  const body: Pg.SelectStmt = {
    targetList: select.targets,
    limitOption: 'LIMIT_OPTION_DEFAULT',
    op: 'SETOP_NONE',
  }
  if (select.from.length > 0) body.fromClause = select.from
  if (select.where !== undefined) body.whereClause = select.where
  if (select.fence) body.limitOffset = numberConst(0)
  return { SelectStmt: body }
}

export function existsSublink(subselect: AstNode): AstNode {
  return { SubLink: { subLinkType: 'EXISTS_SUBLINK', subselect } }
}

/** `(SELECT ...)` as a value: a scalar subquery. */
export function exprSublink(subselect: AstNode): AstNode {
  return { SubLink: { subLinkType: 'EXPR_SUBLINK', subselect } }
}
