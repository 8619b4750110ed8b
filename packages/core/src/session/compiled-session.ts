import { type AstNode, stringConst, typeCast } from '../ast/node.js'
import { BoundedCache } from '../bounded-cache.js'
import type { BindEnvironment } from '../policy/bind-expression.js'
import type {
  AttributeDefinition,
  SessionDatasource,
  SessionInput,
  SessionUser,
} from '../session-context.types.js'
import { type DescendantEntry, withInheritance } from './inheritance-plan.js'
import type { PolicyOutcome, PolicyRuntime, TablePolicies } from './policy-runtime.js'
import { buildScanPlan, type ExposedTable, type ScanPlan } from './scan-plan.js'
import type { SessionTables } from './session-tables.js'

/** One exposed table of the session's datasource with the policies that target it. */
export interface TableEntry {
  readonly exposed: ExposedTable
  readonly policies: TablePolicies
  /** Partitions and inheritance children, however deep, whose rows a scan of this table reads. */
  readonly descendants?: readonly DescendantEntry[]
  /** Whether some policy of the table waits for a query-time decision function. */
  readonly dynamic: boolean
  /** The plan with every query-time decision skipped: what catalogs show (docs/decision-functions.md#outcomes). */
  readonly plan: ScanPlan | null
  /** Views, materialized views and foreign tables: how this session reads them. */
  readonly view?: ViewState
}

/**
 * How one session reads a relation that is not a plain table (view-resolution.ts):
 * `expand` replaces every scan with the defining query (`wrap`: inside the view's own plan),
 * `opaque` scans it like a table, `hidden` makes it missing, like a denied table.
 */
export type ViewState =
  | {
      readonly kind: 'expand'
      readonly body: AstNode
      readonly wrap: boolean
      /**
       * The view's column names, when its definition does not give them (a VALUES body: the
       * names come from `CREATE VIEW v(a, b)`); the body is read under them.
       */
      readonly columnNames?: readonly string[]
    }
  | { readonly kind: 'opaque'; readonly reason: string }
  | { readonly kind: 'hidden'; readonly reason: string }

/** A relation a session sees in catalogs, with the columns it sees. */
export interface VisibleRelation {
  /** Upstream schema name. */
  readonly schema: string
  /** The schema's alias, or its upstream name. */
  readonly visibleSchema: string
  readonly name: string
  readonly columns: readonly string[]
}

/** One exposed schema under the name users see. */
export interface SchemaEntry {
  readonly upstream: string
  readonly visible: string
  /** Built per table on first use (session-tables.ts). */
  readonly tables: SessionTables
}

/**
 * A session compiled for rewriting: the visible catalog, every table's scan plan and the
 * caches. Built by `compileSession`; immutable apart from its caches. A rebuild after an
 * invalidation makes a new object, so cached rewrites of the old one are never reused.
 */
export class CompiledSession {
  readonly user: SessionUser
  readonly datasource: SessionDatasource
  readonly attributeDefinitions: readonly AttributeDefinition[]
  readonly epoch: number
  /** Visible name of the default schema (docs/rules.md rule 11), or undefined when none is exposed. */
  readonly defaultSchema: string | undefined
  readonly schemas: ReadonlyMap<string, SchemaEntry>
  /** Whether any policy needs a query-time decision (such rewrites are not cached). */
  readonly hasQueryDecisions: boolean
  /**
   * Whether some policy of this session can hide a table or a column (a table or column deny,
   * a column allow, or the policy_required mode); without one every table is fully visible.
   */
  readonly mayHide: boolean
  /**
   * Whether some policy of this session may constrain a column to filtering only (projection):
   * upstream errors that quote a value are then redacted (upstream-error.ts).
   */
  readonly mayProject: boolean
  readonly bindEnvironment: BindEnvironment
  /** @internal (epoch-scoped) SQL text → rewrite result. */
  readonly rewriteCache = new BoundedCache<string, object>(512)
  /**
   * @internal (epoch-scoped) Template key → rewrite template, or null when the shape is never
   * templated (literal-template.ts). Apart from the texts, so one-off statements cannot evict them.
   */
  readonly templateCache = new BoundedCache<string, object | null>(256)
  /** @internal The literals that replace current_user, current_database() and current_schema. */
  readonly identity: { readonly user: AstNode; readonly catalog: AstNode; readonly schema: AstNode }
  /** @internal Virtualized catalog views, built and deparsed once per session. */
  readonly catalogViews = new Map<string, AstNode>()
  /** @internal Parts of the virtual pg_catalog relations (pg-catalog.ts), built once per session. */
  readonly catalogParts = new Map<string, object>()
  /**
   * @internal The visible lists the statement being rewritten reads: rewrite.ts defines them
   * once in its WITH (pg-catalog.ts `catalogListsWith`). Cleared before each statement.
   */
  readonly catalogListsRead = new Set<string>()
  /**
   * @internal Whether the statement being rewritten names a catalog object by key (`c.oid =
   * '16390'`): its keyed catalog relations then probe the few candidate rows instead of
   * computing whole visible sets (pg-catalog.ts). Set before each statement.
   */
  catalogProbes = false
  /**
   * @internal Whether the statement being rewritten lists catalog objects wholesale (names
   * none by key or name): its catalog relations are then joined by PostgreSQL as whole sets
   * rather than looked up per row of their left side (virtual-catalog/catalog-listing.ts).
   */
  catalogListing = false
  /**
   * @internal What the session was compiled from, when compiling it again elsewhere gives the
   * same session (no decision function runs): a rewrite worker compiles its own copy from it.
   */
  isolationInput: SessionInput | undefined = undefined
  /**
   * The same session with its shadow policies enforced, and their ids: each statement is also
   * rewritten against it (in process, nothing runs upstream) to tell the audit what they would
   * have done. Absent when the session has no shadow policy, so it costs nothing then.
   */
  shadow: { readonly session: CompiledSession; readonly ids: ReadonlySet<string> } | undefined =
    undefined
  /** Settles a view's state on first use. */
  #resolveView: ((entry: TableEntry) => void) | undefined

  constructor(init: {
    user: SessionUser
    datasource: SessionDatasource
    attributeDefinitions: readonly AttributeDefinition[]
    epoch: number
    defaultSchema: string | undefined
    schemas: ReadonlyMap<string, SchemaEntry>
    bindEnvironment: BindEnvironment
    hasQueryDecisions: boolean
    mayHide: boolean
    mayProject?: boolean
  }) {
    this.user = init.user
    this.datasource = init.datasource
    this.attributeDefinitions = init.attributeDefinitions
    this.epoch = init.epoch
    this.defaultSchema = init.defaultSchema
    this.schemas = init.schemas
    this.bindEnvironment = init.bindEnvironment
    // Built once and shared by every rewrite: trees are never mutated.
    this.identity = Object.freeze({
      user: typeCast(stringConst(init.user.username), 'name'),
      catalog: typeCast(stringConst(init.datasource.name), 'name'),
      schema: typeCast(stringConst(init.defaultSchema ?? 'public'), 'name'),
    })
    this.hasQueryDecisions = init.hasQueryDecisions
    this.mayHide = init.mayHide
    this.mayProject = init.mayProject ?? false
  }

  /**
   * Finds an exposed table by the names a user wrote (visible schema, or the default schema).
   * Hidden tables are found too: the caller decides with the plan, on one code path for
   * hidden and missing tables.
   */
  findTable(schema: string | undefined, table: string): TableEntry | undefined {
    const schemaName = schema ?? this.defaultSchema
    if (schemaName === undefined) return undefined
    return this.schemas.get(schemaName)?.tables.get(table)
  }

  /**
   * @internal How this session reads a view, materialized view or foreign table (undefined
   * for a plain table). Settled on first use and kept.
   */
  viewOf(entry: TableEntry): ViewState | undefined {
    if (entry.view === undefined) this.#resolveView?.(entry)
    return entry.view
  }

  /** @internal Compile only: installs the resolver that settles each relation on first use. */
  resolveViews(resolve: (entry: TableEntry) => void): void {
    this.#resolveView = resolve
  }

  /** The plan that enforces a query: settled decisions plus this query's decisions. */
  planFor(entry: TableEntry, queryOutcomes: ReadonlyMap<string, PolicyOutcome>): ScanPlan | null {
    if (!entry.dynamic) return entry.plan
    const fires = (runtime: PolicyRuntime): PolicyOutcome =>
      runtime.sessionOutcome() ?? queryOutcomes.get(runtime.policy.id) ?? { fire: false }
    const accessMode = this.datasource.accessMode
    const env = this.bindEnvironment
    const plan = buildScanPlan(entry.exposed, entry.policies, fires, accessMode, env)
    return withInheritance(plan, entry.policies, entry.descendants, fires, accessMode, env)
  }

  /**
   * Tables and columns visible in catalogs, in schema and table order, without building the
   * scan plans of tables no statement named (what catalog listings read).
   */
  *visibleRelations(): Iterable<VisibleRelation> {
    for (const schema of this.schemas.values()) {
      for (const { table, columns } of schema.tables.visibility()) {
        if (columns)
          yield {
            schema: schema.upstream,
            visibleSchema: schema.visible,
            name: table.name,
            columns,
          }
      }
    }
  }

  /** Tables and columns visible in catalogs, in schema and table order (builds every plan). */
  *visibleTables(): Iterable<ScanPlan> {
    for (const schema of this.schemas.values()) {
      for (const entry of schema.tables.values()) if (entry.plan) yield entry.plan
    }
  }
}
