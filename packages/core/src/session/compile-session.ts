import type { CatalogTable, ColumnAnchor, TableRelationship } from '../catalog.types.js'
import { runsDecisionFunction } from '../decision/decision-outcome.js'
import { buildDecisionContext, decisionRecord, resolveDecision } from '../decision/index.js'
import { loadCoreFor } from '../load-core.js'
import type { BindEnvironment } from '../policy/bind-expression.js'
import type { EffectivePolicy } from '../policy/policy.types.js'
import { expandTagTargets } from '../policy/tag-targets.js'
import type { SessionInput } from '../session-context.types.js'
import { descendantTables } from './catalog-descendants.js'
import { CatalogIndex, type IndexedSchema } from './catalog-index.js'
import { CompiledSession, type SchemaEntry, type TableEntry } from './compiled-session.js'
import { withInheritance } from './inheritance-plan.js'
import { hasQueryDecisions, PolicyRuntime, policiesForTable } from './policy-runtime.js'
import { buildScanPlan, visibleColumnsOf } from './scan-plan.js'
import { SessionTables } from './session-tables.js'
import { viewResolver } from './view-resolution.js'

/** Where decision-function errors and captured `console.log` lines go (the server logs them). */
export type DecisionLogSink = (entry: {
  level: 'error' | 'info'
  functionId: string
  functionName: string
  message: string
}) => void

export interface CompileOptions {
  /** Clock for decision contexts; defaults to the system clock. */
  now?: () => Date
  onDecisionLog?: DecisionLogSink
}

/**
 * Compiles a session (once per connection and after every invalidation): evaluates
 * session-context decision functions, computes the visible catalog and binds every policy
 * expression, so that per-query work is parse, walk, splice and deparse.
 *
 * ```ts
 * const session = await compileSession(input)
 * const { statements } = rewrite('SELECT * FROM orders', session)
 * ```
 */
export async function compileSession(
  input: SessionInput,
  options: CompileOptions = {},
): Promise<CompiledSession> {
  // Session- and query-time evaluations are synchronous: their workers must be running now.
  await loadCoreFor({ decisions: input.policies.some((p) => runsDecisionFunction(p.decision)) })
  return compileSessionSync(input, options)
}

/**
 * @internal The synchronous body of `compileSession`; requires `loadCore()` first (the parser
 * alone when no policy runs a decision function).
 */
export function compileSessionSync(
  original: SessionInput,
  options: CompileOptions = {},
): CompiledSession {
  const input = expandTagTargets(original)
  const shadowed = input.policies.filter((p) => p.enforcement === 'shadow')
  if (shadowed.length === 0) return compileOne(input, options)
  const session = compileOne(
    { ...input, policies: input.policies.filter((p) => p.enforcement !== 'shadow') },
    options,
  )
  const enforcedAll = input.policies.map((p) =>
    p.enforcement === 'shadow' ? { ...p, enforcement: 'enforce' as const } : p,
  )
  const twin = compileOne({ ...input, policies: enforcedAll }, options)
  session.shadow = { session: twin, ids: new Set(shadowed.map((p) => p.id)) }
  // A worker thread recompiles from the whole input, shadow policies included, and only when
  // every policy is deterministic (the twin holds them all).
  session.isolationInput = session.isolationInput && twin.isolationInput ? input : undefined
  return session
}

/**
 * One compiled session from exactly the policies given (all enforced). Only the policies are
 * prepared here; each table's entry is built when the session first names it, over the
 * catalog's shared index (catalog-index.ts), so a login costs the same for 10 or 10,000 tables.
 */
function compileOne(input: SessionInput, options: CompileOptions): CompiledSession {
  const now = options.now ?? (() => new Date())
  const runtimes = input.policies.map((policy) =>
    preparePolicy(policy, input, now, options.onDecisionLog),
  )
  const index = CatalogIndex.of(input.catalog)
  const env = bindEnvironment(input, index)
  const accessMode = input.datasource.accessMode
  /** The table as the session names it, with the policies that target it. */
  const tableRules = (schema: IndexedSchema, table: CatalogTable) => ({
    exposed: { schema: schema.upstream, visibleSchema: schema.visible, table, name: table.name },
    policies: policiesForTable(runtimes, schema.upstream, table.name, table.ancestors ?? []),
  })
  const entryOf = (schema: IndexedSchema, table: CatalogTable): TableEntry => {
    const { exposed, policies } = tableRules(schema, table)
    const fires = (runtime: PolicyRuntime) => runtime.sessionOutcome() ?? { fire: false }
    const descendants = descendantTables(input.catalog, exposed, (s, t) =>
      index.findTable(s, t),
    ).map((child) => ({
      exposed: child,
      policies: policiesForTable(runtimes, child.schema, child.name, child.table.ancestors ?? []),
    }))
    const plan = withInheritance(
      buildScanPlan(exposed, policies, fires, accessMode, env),
      policies,
      descendants,
      fires,
      accessMode,
      env,
    )
    const dynamic = [policies, ...descendants.map((d) => d.policies)].some(hasQueryDecisions)
    return { exposed, policies, descendants, dynamic, plan }
  }
  // What a catalog listing needs of a table no statement named: only the hiding policies.
  // Views, materialized views and foreign tables are settled by a build (view-resolution.ts).
  const plainTableColumns = (schema: IndexedSchema, table: CatalogTable) => {
    if (table.kind !== undefined && table.kind !== 'TABLE') return undefined
    const { exposed, policies } = tableRules(schema, table)
    const fired = (runtime: PolicyRuntime) => (runtime.sessionOutcome() ?? { fire: false }).fire
    return visibleColumnsOf(exposed, policies, fired, accessMode)
  }
  const tablesOf = new Map<IndexedSchema, SessionTables>()
  const sessionTables = (schema: IndexedSchema): SessionTables => {
    let tables = tablesOf.get(schema)
    if (!tables) {
      tables = new SessionTables(
        schema.tables,
        (table) => entryOf(schema, table),
        // A view's state can narrow its plan: settled before anything reads the entry.
        (entry) => session.viewOf(entry),
        (table) => plainTableColumns(schema, table),
      )
      tablesOf.set(schema, tables)
    }
    return tables
  }
  const schemas = new Map<string, SchemaEntry>()
  for (const schema of index.visible.values()) {
    schemas.set(schema.visible, {
      upstream: schema.upstream,
      visible: schema.visible,
      tables: sessionTables(schema),
    })
  }
  const session = new CompiledSession({
    user: input.user,
    datasource: input.datasource,
    attributeDefinitions: input.attributeDefinitions,
    epoch: input.epoch ?? 0,
    defaultSchema: index.defaultSchema,
    schemas,
    bindEnvironment: env,
    hasQueryDecisions: anyQueryDecision(runtimes, index),
    mayHide: accessMode === 'policy_required' || runtimes.some(mayHide),
    mayProject: runtimes.some((r) => r.policy.type === 'projection' && r.state !== 'skipped'),
  })
  session.resolveViews(
    viewResolver({
      session,
      definitionOf: (entry) => index.viewDefinition(entry.exposed.table),
      runtimes,
      accessMode,
      env,
      findUpstream: (schema, table) => {
        const indexed = index.schema(schema)
        return indexed ? sessionTables(indexed).get(table) : undefined
      },
    }),
  )
  const deterministic = !input.policies.some((p) => runsDecisionFunction(p.decision))
  session.isolationInput = deterministic ? input : undefined
  return session
}

/** Policy types that can take a table or a column away from a session. */
const HIDING_TYPES: ReadonlySet<string> = new Set(['table_deny', 'column_deny', 'column_allow'])

function mayHide(runtime: PolicyRuntime): boolean {
  return HIDING_TYPES.has(runtime.policy.type) && runtime.state !== 'skipped'
}

/**
 * Whether some exposed table has a policy waiting for a query-time decision: tables are
 * looked at only when such a policy exists.
 */
function anyQueryDecision(runtimes: readonly PolicyRuntime[], index: CatalogIndex): boolean {
  const waiting = runtimes.filter((r) => r.state === 'query')
  if (waiting.length === 0) return false
  for (const schema of index.visible.values()) {
    for (const table of schema.tables.values()) {
      const policies = policiesForTable(waiting, schema.upstream, table.name, table.ancestors ?? [])
      if (hasQueryDecisions(policies)) return true
      // A parent's scan also reads its descendants under their own policies.
      for (const child of table.descendants ?? []) {
        const own = policiesForTable(waiting, child.schema, child.table, child.ancestors)
        if (hasQueryDecisions(own)) return true
      }
    }
  }
  return false
}

function preparePolicy(
  policy: EffectivePolicy,
  input: SessionInput,
  now: () => Date,
  onLog: DecisionLogSink | undefined,
): PolicyRuntime {
  const binding = policy.decision
  // Disabled function or missing artifact: the policy fires (docs/decision-functions.md#outcomes).
  if (!binding || !runsDecisionFunction(binding)) return new PolicyRuntime(policy, 'fires')
  if (binding.evaluateContext === 'query') return new PolicyRuntime(policy, 'query')
  const ctx = buildDecisionContext({
    user: input.user,
    datasource: input.datasource,
    attributeDefinitions: input.attributeDefinitions,
    now: now(),
  })
  const result = resolveDecision(binding, ctx, onLog)
  // Repeated in the audit of every statement until the session is rebuilt (docs/audit.md#query-audit).
  return new PolicyRuntime(policy, result.fire ? 'fires' : 'skipped', decisionRecord(result))
}

function bindEnvironment(input: SessionInput, index: CatalogIndex): BindEnvironment {
  const anchors = new Map<string, ColumnAnchor>()
  for (const anchor of input.anchors ?? []) {
    anchors.set(`${anchor.schema}\u0000${anchor.table}\u0000${anchor.resolvedColumn}`, anchor)
  }
  const relationships = new Map<string, TableRelationship>()
  for (const relationship of input.relationships ?? [])
    relationships.set(relationship.id, relationship)
  return {
    user: input.user,
    definitions: new Map(input.attributeDefinitions.map((d) => [d.key, d])),
    findTable: (schema, table) => index.findTable(schema, table),
    findAnchor: (schema, table, column) => anchors.get(`${schema}\u0000${table}\u0000${column}`),
    findRelationship: (id) => relationships.get(id),
    maskKey: input.datasource.maskKey,
  }
}
