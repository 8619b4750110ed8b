import { statementFragment } from '../ast/deparse.js'
import { mapTree } from '../ast/map-tree.js'
import {
  type AstNode,
  boolConst,
  nullConst,
  numberConst,
  type Pg,
  rangeSubselect,
  resTarget,
  selectStmt,
  stringConst,
  stringNode,
  stringsOf,
  typeCast,
} from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import { taggedBody } from '../ast/tag-dispatch.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { DEFAULT_SERVER_VERSION } from './pg-catalog-columns.js'
import {
  catalogTemplate,
  expressionTemplate,
  isVirtualPgCatalogRelation,
} from './pg-catalog-templates.js'

export { isVirtualPgCatalogRelation }

/** Parsed templates by name and upstream version; substitution copies, never mutates. */
const parsedTemplates = new Map<string, AstNode>()

function parsedTemplate(name: string, serverVersion: number): AstNode {
  const key = `${name}@${serverVersion}`
  let tree = parsedTemplates.get(key)
  if (!tree) {
    const sql = catalogTemplate(name, serverVersion) ?? expressionTemplate(name)
    if (sql === undefined) throw new Error(`no catalog template named ${name}`)
    const parsed = parseSql(sql)[0]
    if (!parsed) throw new Error(`catalog template ${name} is empty`)
    tree = parsed.stmt
    parsedTemplates.set(key, tree)
  }
  return tree
}

/**
 * The session's form of `pg_catalog.<name>` (a virtual relation) or of a building block, as a
 * fragment deparsed once per session.
 */
export function pgCatalogFragment(session: CompiledSession, name: string): AstNode {
  const key = `pg_catalog.${name}`
  let fragment = session.catalogViews.get(key)
  if (!fragment) {
    fragment = statementFragment(buildFromTemplate(session, name))
    session.catalogViews.set(key, fragment)
  }
  return fragment
}

function buildFromTemplate(session: CompiledSession, name: string): AstNode {
  const version = session.datasource.serverVersion ?? DEFAULT_SERVER_VERSION
  const tree = substitute(session, parsedTemplate(name, version))
  if (!isVirtualPgCatalogRelation(name)) return tree
  // A security-barrier fence: PostgreSQL must not run a user's condition (which can fail or
  // leak) on a catalog row before the visibility filter has removed it.
  const select = taggedBody(tree, 'SelectStmt')
  return { SelectStmt: { ...select, limitOffset: numberConst(0) } }
}

/**
 * A keyed expression of the virtual catalog (pg-catalog-templates.ts) with `key` in place of
 * `palisade.key()`; built per call, since the key is the user's expression.
 */
export function pgCatalogExpression(session: CompiledSession, name: string, key: AstNode): AstNode {
  const version = session.datasource.serverVersion ?? DEFAULT_SERVER_VERSION
  const tree = substitute(session, parsedTemplate(name, version), key)
  const target = taggedBody(tree, 'SelectStmt').targetList?.[0]
  return taggedBody(target, 'ResTarget').val as AstNode
}

function substitute(session: CompiledSession, template: AstNode, key?: AstNode): AstNode {
  return mapTree(template, (_node, tag, body) => {
    if (tag === 'RangeVar') {
      const rv = body as Pg.RangeVar
      if (rv.schemaname !== 'palisade') return undefined
      const relname = rv.relname ?? ''
      const alias = rv.alias ?? { aliasname: relname }
      if (relname === 'visible_relations') return visibleRelations(session, alias)
      if (relname === 'visible_columns') return visibleColumns(session, alias)
      return rangeSubselect(pgCatalogFragment(session, relname), alias)
    }
    if (tag === 'FuncCall') {
      const call = body as Pg.FuncCall
      const [schema, fn] = stringsOf(call.funcname)
      if (schema !== 'palisade') return undefined
      if (fn === 'username') return session.identity.user
      if (fn === 'datasource') return session.identity.catalog
      if (fn === 'schema_label') return schemaLabel(session, call.args?.[0] as AstNode)
      if (fn === 'key' && key) return key
      throw new Error(`unknown catalog template function palisade.${fn}`)
    }
    return undefined
  })
}

const nameLiteral = (value: string): AstNode => qualifiedCast(stringConst(value), 'name')

/** `arg::pg_catalog.<type>[[]]`: qualified so no upstream type can stand in for it. */
export function qualifiedCast(arg: AstNode, type: string, array = false): AstNode {
  return typeCast(arg, ['pg_catalog', type], array)
}

/** `(VALUES (...), ...) AS alias(columns)`, or an empty typed select when there are no rows. */
function valuesTable(
  rows: AstNode[][],
  columns: readonly string[],
  emptyRow: AstNode[],
  alias: Pg.Alias,
): AstNode {
  const named: Pg.Alias = { aliasname: alias.aliasname ?? 'v', colnames: columns.map(stringNode) }
  if (rows.length === 0) {
    const targets = emptyRow.map((value) => resTarget(value))
    return rangeSubselect(selectStmt({ targets, from: [], where: boolConst(false) }), named)
  }
  const values: Pg.SelectStmt = {
    valuesLists: rows.map((items) => ({ List: { items } }) as AstNode),
    limitOption: 'LIMIT_OPTION_DEFAULT',
    op: 'SETOP_NONE',
  }
  return rangeSubselect({ SelectStmt: values }, named)
}

function visibleRelations(session: CompiledSession, alias: Pg.Alias): AstNode {
  const rows: AstNode[][] = []
  for (const plan of session.visibleTables()) {
    rows.push([nameLiteral(plan.table.schema), nameLiteral(plan.table.name)])
  }
  const empty = [qualifiedCast(nullConst(), 'name'), qualifiedCast(nullConst(), 'name')]
  return valuesTable(rows, ['nspname', 'relname'], empty, alias)
}

function visibleColumns(session: CompiledSession, alias: Pg.Alias): AstNode {
  const rows: AstNode[][] = []
  for (const plan of session.visibleTables()) {
    const names: AstNode = {
      A_ArrayExpr: { elements: plan.columns.map((column) => stringConst(column)) },
    }
    rows.push([
      nameLiteral(plan.table.schema),
      nameLiteral(plan.table.name),
      qualifiedCast(names, 'name', true),
    ])
  }
  const empty = [
    qualifiedCast(nullConst(), 'name'),
    qualifiedCast(nullConst(), 'name'),
    qualifiedCast(nullConst(), 'name', true),
  ]
  return valuesTable(rows, ['nspname', 'relname', 'attnames'], empty, alias)
}

/** `CASE x WHEN 'upstream' THEN 'alias' ... ELSE x END`, or `x` when no schema is aliased. */
function schemaLabel(session: CompiledSession, arg: AstNode): AstNode {
  const whens: AstNode[] = []
  for (const schema of session.schemas.values()) {
    if (schema.visible === schema.upstream) continue
    whens.push({
      CaseWhen: { expr: stringConst(schema.upstream), result: nameLiteral(schema.visible) },
    })
  }
  if (whens.length === 0) return arg
  return qualifiedCast({ CaseExpr: { arg, args: whens, defresult: arg } }, 'name')
}
