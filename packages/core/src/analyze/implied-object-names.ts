import { type NodeBody, type Pg, stringsOf, tagOf } from '../ast/node.js'
import { nodeBody, taggedBody } from '../ast/tag-dispatch.js'
import { REG_TYPES } from '../policy/function-allowlist.js'

/**
 * Where PostgreSQL gives several expressions one common type, a value beside an
 * object-identifier (`reg*`) expression becomes that type too: `coalesce(NULL::regclass,
 * 'hr.employees')` reads the string with `regclassin` (an existence oracle) and
 * `coalesce(NULL::regclass, 16384)` prints whatever relation has that OID. This module finds
 * those groups and the `reg*` type they resolve to, so the analyzer can treat each member
 * like an explicit cast.
 */

/** Columns of `regproc` type in the relations of the virtual pg_catalog. */
const REGPROC_COLUMNS: ReadonlySet<string> = new Set([
  'typinput',
  'typoutput',
  'typreceive',
  'typsend',
  'typmodin',
  'typmodout',
  'typanalyze',
  'typsubscript',
  'prosupport',
  'oprcode',
  'oprrest',
  'oprjoin',
  'amhandler',
  'rngcanonical',
  'rngsubdiff',
])

/** One output column of a select list, with the name a derived table or CTE exposes it as. */
export interface SelectOutput {
  readonly name: string | undefined
  readonly value: unknown
}

/**
 * Collects unification groups and select-list outputs during the analyzer's walk, then tells
 * which group members are to be read as object names of which type.
 */
export class ImpliedObjectNames {
  readonly #groups: unknown[][] = []
  readonly #outputs: SelectOutput[] = []

  /** Records the groups a node forms (call for every node the walk meets). */
  collect(tag: string, body: NodeBody): void {
    switch (tag) {
      case 'CoalesceExpr':
      case 'MinMaxExpr':
        this.#groups.push((body as { args?: unknown[] }).args ?? [])
        return
      case 'CaseExpr': {
        const expr = body as Pg.CaseExpr
        const whens = (expr.args ?? []).map((w) => taggedBody(w, 'CaseWhen'))
        this.#groups.push([...whens.map((w) => w.result), expr.defresult])
        return
      }
      case 'A_ArrayExpr':
        this.#groups.push((body as { elements?: unknown[] }).elements ?? [])
        return
      case 'SelectStmt':
        this.#collectSelect(body as Pg.SelectStmt)
        return
    }
  }

  /** Exposes a CTE's column aliases, by position, as the names of its outputs. */
  collectAliases(query: unknown, names: readonly string[]): void {
    const rows = leafRows(query)
    for (const row of rows) {
      names.forEach((name, i) => {
        if (row[i] !== undefined) this.#outputs.push({ name, value: row[i] })
      })
    }
  }

  /** Every member of a group that holds a `reg*` expression, with the group's type. */
  resolve(): { member: unknown; type: string }[] {
    const typed = this.#typedOutputs()
    const result: { member: unknown; type: string }[] = []
    for (const group of this.#groups) {
      let type: string | undefined
      for (const member of group) {
        type = regTypeOf(member, typed)
        if (type !== undefined) break
      }
      if (type === undefined) continue
      for (const member of group) {
        if (member !== undefined && regTypeOf(member, typed) === undefined) {
          result.push({ member, type })
        }
      }
    }
    return result
  }

  #collectSelect(select: Pg.SelectStmt): void {
    for (const target of select.targetList ?? []) {
      const res = nodeBody(target, 'ResTarget')
      if (res) this.#outputs.push({ name: res.name ?? implicitName(res.val), value: res.val })
    }
    const isSetOperation = select.op !== undefined && select.op !== 'SETOP_NONE'
    const rows = isSetOperation
      ? leafRows({ SelectStmt: select })
      : (select.valuesLists ?? []).map(listItems)
    const width = Math.max(0, ...rows.map((row) => row.length))
    for (let i = 0; i < width && rows.length > 1; i++) this.#groups.push(rows.map((row) => row[i]))
  }

  /** Output names that carry a `reg*` type, to a fixed point (outputs can name each other). */
  #typedOutputs(): Map<string, string> {
    const typed = new Map<string, string>()
    for (let changed = true; changed; ) {
      changed = false
      for (const output of this.#outputs) {
        if (output.name === undefined || typed.has(output.name)) continue
        const type = regTypeOf(output.value, typed)
        if (type !== undefined) {
          typed.set(output.name, type)
          changed = true
        }
      }
    }
    return typed
  }
}

/** The `reg*` type an expression certainly or plausibly has, as far as its shape tells. */
function regTypeOf(node: unknown, typed: ReadonlyMap<string, string>): string | undefined {
  if (node === null || typeof node !== 'object') return undefined
  const tag = tagOf(node)
  const body = (tag === undefined ? undefined : (node as Record<string, unknown>)[tag]) as
    | NodeBody
    | undefined
  if (!body) return undefined
  switch (tag) {
    case 'TypeCast': {
      const typeName = (body as Pg.TypeCast).typeName
      const type = stringsOf(typeName?.names).at(-1)
      if (type === undefined || (typeName?.arrayBounds?.length ?? 0) > 0) return undefined
      return REG_TYPES.has(type) ? type : undefined
    }
    case 'ColumnRef': {
      const name = stringsOf((body as Pg.ColumnRef).fields).at(-1)
      if (name === undefined) return undefined
      return REGPROC_COLUMNS.has(name) ? 'regproc' : typed.get(name)
    }
    case 'FuncCall':
      return stringsOf((body as Pg.FuncCall).funcname).at(-1) === 'pg_typeof'
        ? 'regtype'
        : undefined
    case 'CoalesceExpr':
    case 'MinMaxExpr':
      return firstType((body as { args?: unknown[] }).args ?? [], typed)
    case 'CaseExpr': {
      const expr = body as Pg.CaseExpr
      const results = (expr.args ?? []).map((w) => taggedBody(w, 'CaseWhen').result)
      return firstType([...results, expr.defresult], typed)
    }
    case 'A_Expr': {
      const expr = body as Pg.A_Expr
      return expr.kind === 'AEXPR_NULLIF' ? regTypeOf(expr.lexpr, typed) : undefined
    }
    case 'SubLink': {
      const link = body as Pg.SubLink
      if (link.subLinkType !== 'EXPR_SUBLINK') return undefined
      return firstType(
        leafRows(link.subselect).map((row) => row[0]),
        typed,
      )
    }
    default:
      return undefined
  }
}

function firstType(
  nodes: readonly unknown[],
  typed: ReadonlyMap<string, string>,
): string | undefined {
  for (const node of nodes) {
    const type = regTypeOf(node, typed)
    if (type !== undefined) return type
  }
  return undefined
}

/** The rows a query's leaves produce: each leaf SELECT's select list, or each VALUES row. */
function leafRows(query: unknown): unknown[][] {
  const select = nodeBody(query, 'SelectStmt')
  if (!select) return []
  if (select.op !== undefined && select.op !== 'SETOP_NONE') {
    return [...leafRows({ SelectStmt: select.larg }), ...leafRows({ SelectStmt: select.rarg })]
  }
  if ((select.valuesLists?.length ?? 0) > 0) return (select.valuesLists ?? []).map(listItems)
  return [(select.targetList ?? []).map((t) => nodeBody(t, 'ResTarget')?.val)]
}

function listItems(list: unknown): unknown[] {
  return (list as { List?: { items?: unknown[] } }).List?.items ?? []
}

/** The column name PostgreSQL derives for an unnamed select-list entry, where it matters here. */
function implicitName(value: unknown): string | undefined {
  const ref = nodeBody(value, 'ColumnRef')
  if (ref) return stringsOf(ref.fields).at(-1)
  const cast = nodeBody(value, 'TypeCast')
  if (cast) return implicitName(cast.arg) ?? stringsOf(cast.typeName?.names).at(-1)
  return undefined
}
