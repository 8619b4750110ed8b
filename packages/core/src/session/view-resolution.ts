import { QueryAnalyzer } from '../analyze/query-analyzer.js'
import { walkTree } from '../ast/map-tree.js'
import { type AstNode, type NodeBody, nullConst, type Pg, stringsOf } from '../ast/node.js'
import { nodeBody, taggedBody } from '../ast/tag-dispatch.js'
import type { RelationName } from '../catalog.types.js'
import { isPalisadeError, PalisadeError } from '../errors.js'
import type { BindEnvironment } from '../policy/bind-expression.js'
import type { AccessMode } from '../session-context.types.js'
import { SqlState } from '../sqlstate.js'
import type { CompiledSession, TableEntry, ViewState } from './compiled-session.js'
import { type PolicyRuntime, policiesForTable, type TablePolicies } from './policy-runtime.js'
import { buildScanPlan, type ScanPlan } from './scan-plan.js'
import type { ViewDefinition } from './view-definition.js'

/** Views within views are expanded up to this depth; deeper ones are hidden. */
export const MAX_VIEW_DEPTH = 16

type MutableEntry = { -readonly [K in keyof TableEntry]: TableEntry[K] }

export interface ViewResolutionInput {
  readonly session: CompiledSession
  /** The static expansion of a relation that is not a plain table (shared by every session). */
  readonly definitionOf: (entry: TableEntry) => ViewDefinition | undefined
  readonly runtimes: readonly PolicyRuntime[]
  readonly accessMode: AccessMode
  readonly env: BindEnvironment
  /** Finds an exposed relation by upstream names. */
  readonly findUpstream: (schema: string, table: string) => TableEntry | undefined
}

/**
 * Decides, for one session, how each view, materialized view and foreign table is read:
 *
 * - An expandable view is read through its definition with this user's policies on every base
 *   relation (security-invoker semantics), plus the policies that target the view itself. It is
 *   hidden when it reads a relation hidden from the user, or uses a column the user may not see
 *   anywhere but in its select list; output columns computed from such a column are removed.
 * - Anything that cannot be expanded fails closed: hidden for a user who has a policy on a
 *   relation it reads (any relation, when that is unknown), unless policies target the relation
 *   itself, in which case it is scanned like a table under those policies.
 */
export function viewResolver(input: ViewResolutionInput): (entry: TableEntry) => void {
  const { session, definitionOf, runtimes } = input
  const resolving = new Set<TableEntry>()

  const resolve = (entry: TableEntry): void => {
    const target = entry as MutableEntry
    if (target.view !== undefined) return
    const definition = definitionOf(entry)
    if (!definition) return
    if (resolving.has(entry) || resolving.size >= MAX_VIEW_DEPTH) {
      hide(target, 'its definition nests views too deeply')
      return
    }
    resolving.add(entry)
    try {
      if (definition.kind === 'opaque') failClosed(target, definition.reason, definition.reads)
      else expand(target, definition.body)
    } finally {
      resolving.delete(entry)
    }
  }

  const failClosed = (
    target: MutableEntry,
    reason: string,
    reads: readonly RelationName[] | 'unknown',
  ): void => {
    if (hasLivePolicy(target.policies)) {
      target.view = { kind: 'opaque', reason }
      return
    }
    const governed =
      reads === 'unknown'
        ? runtimes.some(isLive)
        : readClosure(reads, input).some((r) =>
            hasLivePolicy(policiesForTable(runtimes, r.schema, r.table)),
          )
    if (governed) hide(target, `${reason}, and policies apply to what it reads`)
    else target.view = { kind: 'opaque', reason }
  }

  /** Whether every relation the catalog says the view reads is visible to this user. */
  const readsVisible = (target: MutableEntry): boolean => {
    const reads = target.exposed.table.reads
    if (!reads) return false
    return reads.every((r) => {
      const entry = input.findUpstream(r.schema, r.table)
      if (entry && entry !== target) resolve(entry)
      return entry?.plan != null
    })
  }

  const expand = (target: MutableEntry, definitionBody: AstNode): void => {
    const body = structuredClone(definitionBody)
    let references: ReturnType<QueryAnalyzer['analyze']>['references']
    try {
      references = new QueryAnalyzer(session).analyze(body, 'SELECT').references
    } catch (error) {
      if (!isPalisadeError(error)) throw error
      const own = target.plan
      failClosed(target, `its definition cannot be enforced (${error.message})`, 'unknown')
      // Hidden only for calling a function outside the allowlist, over relations the user
      // may read: say so when it is read, instead of answering as missing.
      if (target.view?.kind === 'hidden' && own && FUNCTION_REFUSALS.has(error.code)) {
        if (readsVisible(target)) refuse(target, own, error)
      }
      return
    }
    const scopes = new Map<string, ScanPlan[]>()
    const columns = new Set<string>()
    let readsCatalog = false
    for (const [node, reference] of references) {
      if (reference.kind === 'cte') continue
      if (reference.kind === 'pg_catalog' || reference.kind === 'information_schema') {
        readsCatalog = true
        continue
      }
      const plan = reference.entry.plan
      if (!plan) {
        hide(target, `it reads ${describe(reference.entry)}, which this user may not see`)
        return
      }
      const rv = node as Pg.RangeVar
      const scope = rv.alias?.aliasname ?? rv.relname ?? ''
      scopes.set(scope, [...(scopes.get(scope) ?? []), plan])
      for (const column of plan.columns) columns.add(column)
    }
    const select = taggedBody(body, 'SelectStmt')
    const leaves = leafSelects(select)
    // A VALUES body names its columns column1, column2…; the view's own names come from
    // `CREATE VIEW v(a, b)` and are in the catalog.
    const catalogNames = target.exposed.table.columns.map((c) => c.name)
    const width = valuesWidth(leaves[0])
    const columnNames = width === catalogNames.length ? catalogNames : undefined
    const outputs = columnNames ?? outputNames(leaves[0])
    const stripped = new Set<string>()
    if (!readsCatalog) {
      const produced = producedNames(body)
      const unavailable = (ref: Pg.ColumnRef): boolean => {
        const names = stringsOf(ref.fields)
        const column = names[names.length - 1] as string
        if (column === '*') return false
        const scoped = names.length >= 2 ? scopes.get(names[names.length - 2] as string) : undefined
        if (scoped) return !scoped.some((plan) => plan.columns.includes(column))
        return !columns.has(column) && !produced.has(column)
      }
      const total = countUnavailable(body, unavailable)
      if (total > 0) {
        let inTargets = 0
        for (const leaf of leaves) {
          leaf.targetList?.forEach((item, i) => {
            const target = nodeBody(item, 'ResTarget')
            const count = countUnavailable(target?.val, unavailable)
            if (count === 0 || !target) return
            inTargets += count
            stripped.add(outputs[i] ?? '')
            // Our own copy: the value is computed from a column this user may not read.
            ;(leaf.targetList as AstNode[])[i] = { ResTarget: { ...target, val: nullConst() } }
          })
        }
        if (inTargets < total) {
          hide(target, 'it uses a column this user may not see outside its select list')
          return
        }
      }
    }
    if (stripped.size > 0) {
      const table = target.exposed.table
      target.exposed = {
        ...target.exposed,
        table: { ...table, columns: table.columns.filter((c) => !stripped.has(c.name)) },
      }
      const plan = buildScanPlan(
        target.exposed,
        target.policies,
        (runtime) => runtime.sessionOutcome() ?? { fire: false },
        input.accessMode,
        input.env,
      )
      // Removed columns answer like denied ones (42501 when nothing else is selected).
      target.plan = plan && { ...plan, denied: new Set([...plan.denied, ...stripped]) }
    }
    const plan = target.plan
    if (!plan) {
      hide(target, 'policies on the view hide it')
      return
    }
    const wrap =
      target.dynamic ||
      plan.filtered ||
      plan.masked.size > 0 ||
      plan.error !== undefined ||
      plan.columns.length !== outputs.length ||
      plan.columns.some((column, i) => column !== outputs[i])
    target.view = columnNames
      ? { kind: 'expand', body, wrap, columnNames }
      : { kind: 'expand', body, wrap }
  }

  return resolve
}

const FUNCTION_REFUSALS: ReadonlySet<string> = new Set([
  SqlState.UndefinedFunction,
  SqlState.InsufficientPrivilege,
])

function refuse(target: MutableEntry, plan: ScanPlan, error: PalisadeError): void {
  target.view = { kind: 'opaque', reason: error.message }
  target.plan = {
    ...plan,
    fragments: undefined,
    error: new PalisadeError(
      SqlState.InsufficientPrivilege,
      `view "${target.exposed.name}" calls a function that is not allowed through Palisade`,
      { detail: refusalDetail(error) },
    ),
  }
}

function refusalDetail(error: PalisadeError): string {
  const missing = /^function (.+) does not exist$/.exec(error.message)
  if (missing) return `It calls ${missing[1]}, which is not a built-in function Palisade allows.`
  return `Its definition calls a refused function: ${error.message}.`
}

function hide(target: MutableEntry, reason: string): void {
  target.plan = null
  target.view = { kind: 'hidden', reason } satisfies ViewState
}

function describe(entry: TableEntry): string {
  return `${entry.exposed.schema}.${entry.exposed.name}`
}

/** A policy that fires or may fire for this session (a session decision may have skipped it). */
const isLive = (runtime: PolicyRuntime): boolean => runtime.state !== 'skipped'

function hasLivePolicy(policies: TablePolicies): boolean {
  return Object.values(policies).some((list: readonly PolicyRuntime[]) => list.some(isLive))
}

/** The relations read, followed through exposed views whose own reads are known. */
function readClosure(reads: readonly RelationName[], input: ViewResolutionInput): RelationName[] {
  const out: RelationName[] = []
  const seen = new Set<string>()
  const queue = [...reads]
  while (queue.length > 0) {
    const read = queue.shift() as RelationName
    const key = `${read.schema}\u0000${read.table}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push(read)
    const entry = input.findUpstream(read.schema, read.table)
    // A child's or partition's rows are governed by its ancestors' policies too.
    queue.push(...(entry?.exposed.table.ancestors ?? []))
    // And a parent's scan reads its descendants' rows under their policies.
    for (const child of entry?.descendants ?? [])
      queue.push({ schema: child.exposed.schema, table: child.exposed.name })
    const definition = entry ? input.definitionOf(entry) : undefined
    if (definition?.kind === 'opaque' && definition.reads !== 'unknown') {
      queue.push(...definition.reads)
    } else if (definition?.kind === 'expand') {
      walkTree(definition.body, (tag, body) => {
        if (tag !== 'RangeVar') return true
        const rv = body as Pg.RangeVar
        // Expandable bodies name relations by the schema names users see.
        const found = rv.schemaname
          ? input.session.findTable(rv.schemaname, rv.relname ?? '')
          : undefined
        if (found) queue.push({ schema: found.exposed.schema, table: found.exposed.name })
        return false
      })
    }
  }
  return out
}

/** The plain SELECTs of a query: itself, or every branch of its set operations. */
function leafSelects(select: Pg.SelectStmt): Pg.SelectStmt[] {
  if (select.op !== undefined && select.op !== 'SETOP_NONE') {
    return [
      ...leafSelects(select.larg as unknown as Pg.SelectStmt),
      ...leafSelects(select.rarg as unknown as Pg.SelectStmt),
    ]
  }
  return [select]
}

/** The number of columns of a VALUES leaf, or undefined for a SELECT. */
function valuesWidth(select: Pg.SelectStmt | undefined): number | undefined {
  const first = (select?.valuesLists?.[0] as { List?: { items?: unknown[] } } | undefined)?.List
  return first ? (first.items?.length ?? 0) : undefined
}

/** Output column names of a SELECT, as PostgreSQL names them for the printed definitions. */
function outputNames(select: Pg.SelectStmt | undefined): string[] {
  return (select?.targetList ?? []).map((item) => {
    const target = nodeBody(item, 'ResTarget')
    if (target?.name !== undefined) return target.name
    const ref = nodeBody(target?.val, 'ColumnRef')
    const names = stringsOf(ref?.fields)
    return names[names.length - 1] ?? '?column?'
  })
}

/** Names a definition gives to things a column reference may name: outputs, aliases, CTEs. */
function producedNames(body: AstNode): Set<string> {
  const names = new Set<string>()
  const add = (list: readonly unknown[] | undefined) => {
    for (const name of stringsOf(list)) names.add(name)
  }
  walkTree(body, (tag, node: NodeBody) => {
    // Aliases of FROM items are untagged fields (`alias: { aliasname, colnames }`).
    const alias = node['alias'] as { aliasname?: unknown; colnames?: unknown[] } | undefined
    if (alias && typeof alias === 'object') {
      if (typeof alias.aliasname === 'string') names.add(alias.aliasname)
      add(alias.colnames)
    }
    switch (tag) {
      case 'SelectStmt': {
        // VALUES names its columns column1, column2…
        const width = valuesWidth(node as Pg.SelectStmt) ?? 0
        for (let i = 1; i <= width; i++) names.add(`column${i}`)
        break
      }
      case 'RangeFunction':
        // An unaliased function in FROM names its column after the function.
        for (const fn of (node['functions'] as unknown[] | undefined) ?? []) {
          walkTree(fn, (inner, call) => {
            if (inner !== 'FuncCall') return true
            const funcname = stringsOf((call as Pg.FuncCall).funcname)
            names.add(funcname[funcname.length - 1] ?? '')
            return false
          })
        }
        break
      case 'ResTarget':
        if (typeof node['name'] === 'string') names.add(node['name'])
        break
      case 'Alias':
        if (typeof node['aliasname'] === 'string') names.add(node['aliasname'])
        add(node['colnames'] as unknown[] | undefined)
        break
      case 'CommonTableExpr':
        if (typeof node['ctename'] === 'string') names.add(node['ctename'])
        add(node['aliascolnames'] as unknown[] | undefined)
        break
      case 'RangeVar':
        if (typeof node['relname'] === 'string') names.add(node['relname'])
        break
      case 'ColumnDef':
        if (typeof node['colname'] === 'string') names.add(node['colname'])
        break
    }
    return true
  })
  return names
}

function countUnavailable(value: unknown, unavailable: (ref: Pg.ColumnRef) => boolean): number {
  let count = 0
  walkTree(value, (tag, node) => {
    if (tag !== 'ColumnRef') return true
    if (unavailable(node as Pg.ColumnRef)) count++
    return false
  })
  return count
}
