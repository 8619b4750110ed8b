import { fromClauseNames } from '../analyze/leakproof-conjuncts.js'
import { deparseStatement, expressionText, scanBodyFragment } from '../ast/deparse.js'
import { mapTree } from '../ast/map-tree.js'
import {
  type AstNode,
  type Pg,
  rangeSubselect,
  stringConst,
  stringsOf,
  tagOf,
  typeCast,
} from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import { nodeBody, taggedBody } from '../ast/tag-dispatch.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { DEFAULT_SERVER_VERSION } from './pg-catalog-columns.js'
import {
  catalogTemplate,
  expressionTemplate,
  isCatalogKey,
  isCatalogProbe,
  isCatalogSet,
  isVirtualPgCatalogRelation,
  keyedCatalogTemplate,
} from './pg-catalog-templates.js'

export { isVirtualPgCatalogRelation }

/** The upstream's version the templates are built for (their column lists follow it). */
function serverVersionOf(session: CompiledSession): number {
  return session.datasource.serverVersion ?? DEFAULT_SERVER_VERSION
}

/** Parsed templates by name and upstream version; substitution copies, never mutates. */
const parsedTemplates = new Map<string, AstNode>()

function parsedTemplate(name: string, serverVersion: number, keyed = false): AstNode {
  const key = `${keyed ? 'keyed:' : ''}${name}@${serverVersion}`
  let tree = parsedTemplates.get(key)
  if (!tree) {
    const sql = keyed
      ? keyedCatalogTemplate(name, serverVersion)
      : (catalogTemplate(name, serverVersion) ?? expressionTemplate(name))
    if (sql === undefined) throw new Error(`no catalog template named ${name}`)
    const parsed = parseSql(sql)[0]
    if (!parsed) throw new Error(`catalog template ${name} is empty`)
    tree = parsed.stmt
    parsedTemplates.set(key, tree)
  }
  return tree
}

/** A virtual relation's body as text: `<WITH …> SELECT … FROM …` and its visibility filter. */
interface FragmentParts {
  readonly head: string
  readonly where: string
  /** Columns passed through unchanged from the real relation (`x.<column>`), by name. */
  readonly plain: ReadonlySet<string>
  /** The visible lists it reads (statement-level CTEs). */
  readonly lists: ReadonlySet<string>
  /** Names its FROM binds, which a pushed outer reference must not use (undefined: unknown). */
  readonly scope: ReadonlySet<string> | undefined
}

/**
 * The session's form of `pg_catalog.<name>` (a virtual relation), fenced, from parts deparsed
 * once per session. `pushed` are a user's leakproof conditions on plain columns, already
 * qualified by `x` (the real relation inside): they run inside the fence, so a statement about
 * one relation reads that relation's catalog rows, not the whole catalog.
 */
export function pgCatalogFragment(
  session: CompiledSession,
  name: string,
  pushed: readonly AstNode[] = [],
): AstNode {
  if (!isVirtualPgCatalogRelation(name)) throw new Error(`no virtual catalog relation ${name}`)
  const keyed = session.catalogProbes && pushed.some((c) => keyEquality(name, c))
  const parts = fragmentParts(session, name, keyed)
  for (const list of parts.lists) session.catalogListsRead.add(list)
  const conjuncts = [parts.where, ...pushed.map((c) => expressionText(c))]
  // A security-barrier fence: PostgreSQL must not run a user's condition (which can fail or
  // leak) on a catalog row before the visibility filter has removed it.
  return scanBodyFragment(parts.head, conjuncts, true)
}

/**
 * Whether a pushed condition is `x.<key> = …` (or `= ANY (SELECT …)`) on a key column of the
 * relation's keyed form: the fence then holds a few candidate rows, and probing each beats
 * computing whole sets.
 */
function keyEquality(name: string, condition: AstNode): boolean {
  const sublink = nodeBody(condition, 'SubLink')
  const expr = nodeBody(condition, 'A_Expr')
  const sides =
    sublink?.subLinkType === 'ANY_SUBLINK' && stringsOf(sublink.operName).at(-1) === '='
      ? [sublink.testexpr]
      : expr?.kind === 'AEXPR_OP' && stringsOf(expr.name).at(-1) === '='
        ? [expr.lexpr, expr.rexpr]
        : []
  return sides.some((side) => {
    const [qualifier, column] = stringsOf(nodeBody(side as AstNode, 'ColumnRef')?.fields)
    return qualifier === 'x' && column !== undefined && isCatalogKey(name, column)
  })
}

/** The columns of a virtual relation that a pushed condition may name. */
export function pgCatalogPlainColumns(session: CompiledSession, name: string): ReadonlySet<string> {
  return fragmentParts(session, name).plain
}

/**
 * Whether a reference qualified by `qualifier` written inside the fence of `name` still reaches
 * the enclosing query's relation: no name bound inside takes it.
 */
export function pgCatalogReaches(
  session: CompiledSession,
  name: string,
  qualifier: string,
): boolean {
  const scope = fragmentParts(session, name).scope
  return scope !== undefined && !scope.has(qualifier) && !qualifier.startsWith(SET_PREFIX)
}

/** The type of a key column a correlated condition may be pushed on (an integer or an OID). */
export function pgCatalogKeyType(column: string): 'oid' | 'int2' | 'int4' | undefined {
  if (column === 'attnum' || column === 'adnum') return 'int2'
  if (column === 'objsubid') return 'int4'
  return OID_KEYS.has(column) ? 'oid' : undefined
}

const OID_KEYS = new Set([
  'oid',
  'relnamespace',
  'attrelid',
  'adrelid',
  'conrelid',
  'confrelid',
  'conindid',
  'indexrelid',
  'indrelid',
  'objoid',
  'classoid',
  'typnamespace',
  'typrelid',
  'inhrelid',
  'inhparent',
  'partrelid',
  'pronamespace',
  'enumtypid',
  'rngtypid',
])

function fragmentParts(session: CompiledSession, name: string, keyed = false): FragmentParts {
  const key = `pg_catalog.${name}${keyed ? '#keyed' : ''}`
  const cached = session.catalogParts.get(key) as FragmentParts | undefined
  if (cached) return cached
  const version = serverVersionOf(session)
  const needed = new Set<string>()
  const tree = substitute(session, parsedTemplate(name, version, keyed), needed)
  const { whereClause, ...select } = taggedBody(tree, 'SelectStmt')
  if (!whereClause) throw new Error(`catalog template ${name} has no visibility filter`)
  const lists = new Set<string>()
  collectSets(session, needed, version, lists)
  const parts: FragmentParts = {
    head: deparseStatement({ SelectStmt: select }),
    where: expressionText(whereClause as AstNode),
    plain: plainColumns(name, select.targetList ?? []),
    lists,
    scope: fromClauseNames(select.fromClause ?? []),
  }
  session.catalogParts.set(key, parts)
  return parts
}

/**
 * Key columns a condition may be pushed on, when the template passes them through as
 * `x.<column>` (or `x.*`): OIDs, names and kinds, compared with leakproof built-in operators.
 */
const PUSHABLE: Readonly<Record<string, readonly string[]>> = {
  pg_class: ['oid', 'relname', 'relnamespace', 'relkind'],
  pg_attribute: ['attrelid', 'attnum', 'attname'],
  pg_attrdef: ['oid', 'adrelid', 'adnum'],
  pg_constraint: ['oid', 'conrelid', 'confrelid', 'contype', 'conname', 'conindid'],
  pg_index: ['indexrelid', 'indrelid'],
  pg_description: ['objoid', 'classoid', 'objsubid'],
  pg_type: ['oid', 'typname', 'typnamespace', 'typrelid', 'typtype'],
  pg_inherits: ['inhrelid', 'inhparent'],
  pg_partitioned_table: ['partrelid'],
  pg_namespace: ['oid'],
  pg_proc: ['oid', 'proname', 'pronamespace'],
  pg_enum: ['enumtypid'],
  pg_range: ['rngtypid'],
}

function plainColumns(name: string, targets: readonly unknown[]): ReadonlySet<string> {
  const passed = new Set<string>()
  let star = false
  for (const target of targets) {
    const res = taggedBody(target as AstNode, 'ResTarget')
    const fields = nodeBody(res.val as AstNode, 'ColumnRef')?.fields ?? []
    const names = fields.map((f) => (tagOf(f) === 'A_Star' ? '*' : stringsOf([f])[0]))
    if (names.length !== 2 || names[0] !== 'x') continue
    if (names[1] === '*') star = true
    else if (res.name === undefined || res.name === names[1]) passed.add(names[1] as string)
  }
  return new Set((PUSHABLE[name] ?? []).filter((column) => star || passed.has(column)))
}

/**
 * A keyed expression of the virtual catalog (pg-catalog-templates.ts) with `key` in place of
 * `palisade.key()`; built per call, since the key is the user's expression.
 */
export function pgCatalogExpression(session: CompiledSession, name: string, key: AstNode): AstNode {
  const version = serverVersionOf(session)
  const needed = new Set<string>()
  const tree = substitute(session, parsedTemplate(name, version), needed, [key])
  // An expression has no WITH of its own: the lists and sets it reads are the statement's.
  const lists = new Set<string>()
  collectSets(session, needed, version, lists)
  for (const list of lists) session.catalogListsRead.add(list)
  const target = taggedBody(tree, 'SelectStmt').targetList?.[0]
  return taggedBody(target, 'ResTarget').val as AstNode
}

/** Prefix of the names of the lists and sets (statement-level CTEs; a user CTE never keeps it). */
const SET_PREFIX = 'palisade_'

/**
 * Replaces the placeholders of a template: `palisade.<set>` becomes a reference to the CTE of
 * that set (collected in `needed`), `palisade.<relation>` the relation's own fragment,
 * `palisade.<probe>(…)` the probe's expression over those arguments, `palisade.key(n)` the
 * n-th of `keys`.
 */
function substitute(
  session: CompiledSession,
  template: AstNode,
  needed: Set<string>,
  keys: readonly AstNode[] = [],
): AstNode {
  return mapTree(template, (_node, tag, body) => {
    if (tag === 'RangeVar') {
      const rv = body as Pg.RangeVar
      if (rv.schemaname !== 'palisade') return undefined
      const relname = rv.relname ?? ''
      const alias = rv.alias ?? { aliasname: relname }
      if (isSet(relname)) {
        needed.add(relname)
        return {
          RangeVar: { relname: `${SET_PREFIX}${relname}`, inh: true, relpersistence: 'p', alias },
        }
      }
      for (const list of fragmentParts(session, relname).lists) needed.add(list)
      return rangeSubselect(pgCatalogFragment(session, relname), alias)
    }
    if (tag === 'FuncCall') {
      const call = body as Pg.FuncCall
      const [schema, fn] = stringsOf(call.funcname)
      if (schema !== 'palisade') return undefined
      if (fn === 'username') return session.identity.user
      if (fn === 'datasource') return session.identity.catalog
      if (fn === 'schema_label') return schemaLabel(session, call.args?.[0] as AstNode)
      if (fn === 'key') {
        const index = Number(nodeBody(call.args?.[0] as AstNode, 'A_Const')?.ival?.ival ?? 0)
        const key = keys[index - 1]
        if (key) return key
      }
      if (fn !== undefined && isCatalogProbe(fn)) return probe(session, fn, call, needed, keys)
      throw new Error(`unknown catalog template function palisade.${fn}`)
    }
    return undefined
  })
}

/** A probe's expression (pg-catalog-templates.ts `PROBES`) over a call's arguments. */
function probe(
  session: CompiledSession,
  name: string,
  call: Pg.FuncCall,
  needed: Set<string>,
  keys: readonly AstNode[],
): AstNode {
  const version = serverVersionOf(session)
  const args = (call.args ?? []).map((arg) => substitute(session, arg as AstNode, needed, keys))
  // A scalar subquery, evaluated per candidate row: PostgreSQL would turn a bare EXISTS into a
  // join and run it over every object, which is what the probe is there to avoid.
  const subselect = substitute(session, parsedTemplate(name, version), needed, args)
  return { SubLink: { subLinkType: 'EXPR_SUBLINK', subselect } } as AstNode
}

const LISTS = new Set(['visible_relations', 'visible_columns', 'visible_schemas', 'column_lists'])

/**
 * The lists other lists are made from: each schema once with its tables (and, when the
 * statement reads columns, each table's column list number), and the distinct column lists.
 * Probes read these two directly, a row per schema, so a statement about one table never
 * expands the lists into a row per table.
 */
const LIST_SOURCES: Readonly<Record<string, readonly string[]>> = {
  visible_relations: ['visible_schemas'],
  visible_columns: ['visible_schemas', 'column_lists'],
}

function isSet(name: string): boolean {
  return LISTS.has(name) || isCatalogSet(name)
}

/**
 * Records the sets a fragment reads, and the sets and visible lists those read, in `lists`:
 * they are defined once per statement (`catalogListsWith`), so a statement whose catalog
 * relations read a set several times (a listing joins pg_class, pg_index and pg_constraint,
 * which all read the visible indexes) computes it once. Fragments have no WITH of their own.
 */
function collectSets(
  session: CompiledSession,
  needed: ReadonlySet<string>,
  version: number,
  lists: Set<string>,
): void {
  const visit = (name: string): void => {
    if (lists.has(name)) return
    lists.add(name)
    if (LISTS.has(name)) return
    for (const dependency of setBody(session, name, version).needs) visit(dependency)
  }
  for (const name of needed) visit(name)
}

/** A set's body with its placeholders replaced, and the sets and lists it reads; per session. */
function setBody(
  session: CompiledSession,
  name: string,
  version: number,
): { body: AstNode; needs: ReadonlySet<string> } {
  const key = `set-body:${name}`
  const cached = session.catalogParts.get(key) as
    | { body: AstNode; needs: ReadonlySet<string> }
    | undefined
  if (cached) return cached
  const needs = new Set<string>()
  const made = { body: substitute(session, parsedTemplate(name, version), needs), needs }
  session.catalogParts.set(key, made)
  return made
}

/**
 * The visible lists and sets a rewritten statement reads, as CTEs for its top-level WITH, each
 * after those it reads: each once per statement however many catalog relations read it,
 * materialized so PostgreSQL computes each once. Their names start with `palisade_`, which a
 * user's CTE never keeps (query-analyzer.ts renames it), so nothing the user writes can stand in
 * for them.
 */
export function catalogListsWith(session: CompiledSession, names: Iterable<string>): AstNode[] {
  const version = serverVersionOf(session)
  const needs = (name: string): Iterable<string> =>
    LISTS.has(name) ? (LIST_SOURCES[name] ?? []) : setBody(session, name, version).needs
  const ordered: string[] = []
  const placed = new Set<string>()
  const place = (name: string): void => {
    if (placed.has(name)) return
    placed.add(name)
    for (const dependency of needs(name)) place(dependency)
    ordered.push(name)
  }
  for (const name of [...names].sort()) place(name)
  // Every list and set the statement reads is placed, so this tells whether it reads columns.
  const withLists = placed.has('column_lists')
  return ordered.map(
    (name) =>
      ({
        CommonTableExpr: {
          ctename: `${SET_PREFIX}${name}`,
          ctequery: LISTS.has(name)
            ? visibleList(session, name, withLists)
            : setBody(session, name, version).body,
          ...(version >= 120000 ? { ctematerialized: 'CTEMaterializeAlways' } : {}),
        },
      }) as AstNode,
  )
}

/**
 * The session's visible lists, as `unnest` over array constants: a few strings however many
 * tables, which PostgreSQL reads in milliseconds where a VALUES list of 10,000 rows takes seconds
 * to parse and plan. Every statement that reads the catalog carries them, so they are kept
 * short: `visible_schemas` has each schema's name once with the array of its tables (and, with
 * `withLists`, the number of each table's column list), `column_lists` each distinct column list
 * once (tables of one layout, as in a schema per tenant, share theirs). `visible_relations`
 * (`nspname, relname`) and `visible_columns` (`nspname, relname, attnames`) are a row per table,
 * made from those two by the statement itself. The constants are built once per session.
 */
function visibleList(session: CompiledSession, name: string, withLists: boolean): AstNode {
  // Only the schemas' list differs with `withLists`.
  const key = name === 'visible_schemas' ? `list:${name}:${withLists}` : `list:${name}`
  const cached = session.catalogViews.get(key)
  if (cached) return cached
  const sql =
    name === 'visible_relations'
      ? `SELECT s.nspname, r.relname FROM ${SET_PREFIX}visible_schemas s, pg_catalog.unnest(s.relnames) AS r(relname)`
      : name === 'visible_columns'
        ? `SELECT s.nspname, r.relname, d.attnames FROM ${SET_PREFIX}visible_schemas s, ROWS FROM (pg_catalog.unnest(s.relnames), pg_catalog.unnest(s.lists)) AS r(relname, list), (SELECT l.attnames::pg_catalog.name[] AS attnames, l.list FROM ${SET_PREFIX}column_lists c, ROWS FROM (pg_catalog.unnest(c.attlists)) WITH ORDINALITY AS l(attnames, list)) AS d WHERE d.list OPERATOR(pg_catalog.=) r.list`
        : listConstants(session, name, withLists)
  const list = { PalisadeFragment: { sql } } as unknown as AstNode
  session.catalogViews.set(key, list)
  return list
}

/** The visible relations by schema, and the distinct column lists: what both constants read. */
interface ListGroups {
  schemas: Map<string, { tables: string[]; lists: number[] }>
  /** Each distinct column list's array text, numbered from 1 in insertion order. */
  lists: Map<string, number>
}

/** The session's `ListGroups`, made once per session. */
function listGroups(session: CompiledSession): ListGroups {
  const cached = session.catalogParts.get('list-groups') as ListGroups | undefined
  if (cached) return cached
  const groups: ListGroups = { schemas: new Map(), lists: new Map() }
  for (const relation of session.visibleRelations()) {
    let schema = groups.schemas.get(relation.schema)
    if (!schema) {
      schema = { tables: [], lists: [] }
      groups.schemas.set(relation.schema, schema)
    }
    schema.tables.push(relation.name)
    const columns = arrayLiteral(relation.columns)
    let number = groups.lists.get(columns)
    if (number === undefined) {
      number = groups.lists.size + 1
      groups.lists.set(columns, number)
    }
    schema.lists.push(number)
  }
  session.catalogParts.set('list-groups', groups)
  return groups
}

/** `visible_schemas` or `column_lists` (see `visibleList`) as the SELECT of their constants. */
function listConstants(session: CompiledSession, name: string, withLists: boolean): string {
  const { schemas, lists } = listGroups(session)
  // Built as text from deparsed constants: a tree of constants would print the same.
  const constant = (items: readonly string[], type: string) =>
    `${expressionText(stringConst(arrayLiteral(items)))}::pg_catalog.${type}[]`
  if (name === 'column_lists') return `SELECT ${constant([...lists.keys()], 'text')} AS attlists`
  const groups = [...schemas.values()]
  const names = constant([...schemas.keys()], 'name')
  const tables = constant(
    groups.map((g) => arrayLiteral(g.tables)),
    'text',
  )
  const numbers = withLists
    ? constant(
        groups.map((g) => arrayLiteral(g.lists.map(String))),
        'text',
      )
    : 'NULL::pg_catalog.text[]'
  return `SELECT s.nspname, s.relnames::pg_catalog.name[] AS relnames, s.lists::pg_catalog.int4[] AS lists FROM ROWS FROM (pg_catalog.unnest(${names}), pg_catalog.unnest(${tables}), pg_catalog.unnest(${numbers})) AS s(nspname, relnames, lists)`
}

/**
 * An array constant's text (`{a,"b\"c"}`): an element of word characters bare (at 10,000 tables
 * the lists are a megabyte, and quotes and escapes made up a third of it), any other quoted
 * with `"` and `\` escaped, so every name (commas, braces, spaces, NULL) reads back as itself.
 */
function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((item) => (BARE.test(item) && !/^null$/i.test(item) ? item : `"${item.replace(/["\\]/g, '\\$&')}"`)).join(',')}}`
}

const BARE = /^\w+$/

const nameLiteral = (value: string): AstNode => qualifiedCast(stringConst(value), 'name')

/** `arg::pg_catalog.<type>[[]]`: qualified so no upstream type can stand in for it. */
export function qualifiedCast(arg: AstNode, type: string, array = false): AstNode {
  return typeCast(arg, ['pg_catalog', type], array)
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
