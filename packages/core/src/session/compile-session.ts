import type { CatalogTable, ColumnAnchor, TableRelationship } from '../catalog.types.js'
import { runsDecisionFunction } from '../decision/decision-outcome.js'
import { buildDecisionContext, decisionRecord, resolveDecision } from '../decision/index.js'
import { loadCoreFor } from '../load-core.js'
import type { BindEnvironment } from '../policy/bind-expression.js'
import type { EffectivePolicy } from '../policy/policy.types.js'
import { expandTagTargets } from '../policy/tag-targets.js'
import type { SessionInput } from '../session-context.types.js'
import { CompiledSession, type SchemaEntry, type TableEntry } from './compiled-session.js'
import { hasQueryDecisions, PolicyRuntime, policiesForTable } from './policy-runtime.js'
import { buildScanPlan } from './scan-plan.js'
import { type ViewDefinition, viewDefinitionOf } from './view-definition.js'
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

/** One compiled session from exactly the policies given (all enforced). */
function compileOne(input: SessionInput, options: CompileOptions): CompiledSession {
  const now = options.now ?? (() => new Date())
  const runtimes = input.policies.map((policy) =>
    preparePolicy(policy, input, now, options.onDecisionLog),
  )
  const env = bindEnvironment(input)
  const schemas = new Map<string, SchemaEntry>()
  const visibleSchemaOf = new Map(input.catalog.schemas.map((s) => [s.name, s.alias || s.name]))
  const exposedUpstream = new Map<string, TableEntry>()
  const definitions = new Map<TableEntry, ViewDefinition>()
  const exposedVisible = (schema: string, table: string): string | undefined =>
    exposedUpstream.has(`${schema}\u0000${table}`) ? visibleSchemaOf.get(schema) : undefined
  const pending: [TableEntry, CatalogTable][] = []
  for (const schema of input.catalog.schemas) {
    const visible = schema.alias ? schema.alias : schema.name
    const tables = new Map<string, TableEntry>()
    for (const table of schema.tables) {
      const exposed = { schema: schema.name, visibleSchema: visible, table, name: table.name }
      const policies = policiesForTable(runtimes, schema.name, table.name, table.ancestors ?? [])
      const plan = buildScanPlan(
        exposed,
        policies,
        (runtime) => runtime.sessionOutcome() ?? { fire: false },
        input.datasource.accessMode,
        env,
      )
      const entry: TableEntry = { exposed, policies, dynamic: hasQueryDecisions(policies), plan }
      tables.set(table.name, entry)
      exposedUpstream.set(`${schema.name}\u0000${table.name}`, entry)
      if (table.kind !== undefined && table.kind !== 'TABLE') pending.push([entry, table])
    }
    schemas.set(visible, { upstream: schema.name, visible, tables })
  }
  for (const [entry, table] of pending) {
    const definition = viewDefinitionOf(table, exposedVisible)
    if (definition) definitions.set(entry, definition)
  }
  const session = new CompiledSession({
    user: input.user,
    datasource: input.datasource,
    attributeDefinitions: input.attributeDefinitions,
    epoch: input.epoch ?? 0,
    defaultSchema: defaultSchemaOf(input),
    schemas,
    bindEnvironment: env,
  })
  if (definitions.size > 0) {
    session.resolveViews(
      viewResolver({
        session,
        definitions,
        runtimes,
        accessMode: input.datasource.accessMode,
        env,
        findUpstream: (schema, table) => exposedUpstream.get(`${schema}\u0000${table}`),
      }),
    )
  }
  const deterministic = !input.policies.some((p) => runsDecisionFunction(p.decision))
  session.isolationInput = deterministic ? input : undefined
  return session
}

/** The exposed schema whose upstream name is `public`, else the first visible name (docs/admin-api.md#catalog-discovery). */
function defaultSchemaOf(input: SessionInput): string | undefined {
  const pub = input.catalog.schemas.find((s) => s.name === 'public')
  if (pub) return pub.alias ? pub.alias : pub.name
  const names = input.catalog.schemas.map((s) => (s.alias ? s.alias : s.name)).sort()
  return names[0]
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

function bindEnvironment(input: SessionInput): BindEnvironment {
  const tables = new Map<string, CatalogTable>()
  for (const schema of input.catalog.schemas) {
    for (const table of schema.tables) tables.set(`${schema.name}\u0000${table.name}`, table)
  }
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
    findTable: (schema, table) => tables.get(`${schema}\u0000${table}`),
    findAnchor: (schema, table, column) => anchors.get(`${schema}\u0000${table}\u0000${column}`),
    findRelationship: (id) => relationships.get(id),
    maskKey: input.datasource.maskKey,
  }
}
