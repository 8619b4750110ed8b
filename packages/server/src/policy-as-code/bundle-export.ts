import type { Limits, Page, ScopedStore } from '@palisade/store'
import {
  type BundleIdentityProvider,
  bundleIdentityProviders,
} from './bundle-identity-providers.js'
import {
  type BundleWindow,
  type BundleWindows,
  canonicalWindow,
  windowsOf,
} from './bundle-windows.js'

/**
 * A policy bundle: the access model of a store (or of some of its datasources) as data that
 * diffs well in git. Objects are named, never referred to by id; lists are sorted; there are no
 * timestamps, versions, passwords, datasource secrets or compiled modules.
 */
export interface PolicyBundle {
  version: typeof BUNDLE_VERSION
  attribute_definitions: BundleAttribute[]
  users: BundleUser[]
  roles: BundleRole[]
  decision_functions: BundleDecisionFunction[]
  policies: BundlePolicy[]
  datasources: BundleDatasource[]
  /** OpenID Connect providers, without their client secrets (docs/sso.md). */
  identity_providers: BundleIdentityProvider[]
}

export const BUNDLE_VERSION = 'palisade.policy-bundle/v1'

export interface BundleAttribute {
  key: string
  entity_type: string
  value_type: string
  display_name: string
  default_value: unknown
  allowed_values: unknown[] | null
  description: string | null
}

export interface BundleUser {
  username: string
  is_active: boolean
  email: string | null
  display_name: string | null
  attributes: Record<string, unknown>
  /** Present when set (docs/roles-and-access.md#limits); absent in a bundle: left as stored. */
  limits?: Limits | null
}

export interface BundleRole {
  name: string
  description: string | null
  is_active: boolean
  members: string[]
  /** Windows of time-bound memberships by username. */
  member_windows?: BundleWindows
  parents: string[]
  /** Present when set (docs/roles-and-access.md#limits); absent in a bundle: left as stored. */
  limits?: Limits | null
}

export interface BundleDecisionFunction {
  name: string
  description: string | null
  language: string
  evaluate_context: string
  on_error: string
  log_level: string
  is_enabled: boolean
  decision_config: unknown
  source: string
  /** With `export --with-versions`: apply refuses to overwrite a function changed since. */
  version?: number
}

export interface BundlePolicy {
  name: string
  description: string | null
  policy_type: string
  targets: unknown[]
  filter_expression: string | null
  mask_expression: string | null
  /** `aggregation` policies only (present there, absent on other types). */
  min_group_size?: number
  /** `aggregation` policies only: the value-revealing aggregates allowed, sorted. */
  allowed_aggregates?: string[]
  decision_function: string | null
  is_enabled: boolean
  /** `enforce`, or `shadow`: evaluated and audited, never applied. */
  enforcement: 'enforce' | 'shadow'
  /** With `export --with-versions`: apply refuses to overwrite a policy changed since. */
  version?: number
}

/** An assignment; a time-bound one also carries its window (`valid_from`, `valid_until`). */
export interface BundleAssignment extends BundleWindow {
  policy: string
  scope: 'all' | 'user' | 'role'
  user: string | null
  role: string | null
  priority: number
}

export interface BundleDatasource {
  name: string
  ds_type: string
  access_mode: string
  is_active: boolean
  statement_timeout_ms: number
  pool_size: number
  pool_mode: string | null
  /** The connection settings without the password (set it through the API after a create). */
  config: Record<string, unknown>
  access: {
    all: boolean
    users: string[]
    roles: string[]
    /** Windows of time-bound access rows by username and role name. */
    windows?: { users?: BundleWindows; roles?: BundleWindows }
  }
  assignments: BundleAssignment[]
  /** Tags on the datasource's catalog tables (`column` null) and columns; omitted when none. */
  tags?: BundleObjectTags[]
}

/** One tagged table or column. */
export interface BundleObjectTags {
  schema: string
  table: string
  column: string | null
  tags: string[]
}

/** The services an export reads (the store itself, or one transaction of it). */
export type BundleStore = Omit<ScopedStore, 'sessions'>

/** Every item of a paginated list. */
export async function allPages<T>(list: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const { data, total } = await list(page)
    out.push(...data)
    if (data.length === 0 || out.length >= total) return out
  }
}

const byName = <T extends { name: string }>(a: T, b: T) => compare(a.name, b.name)
const sorted = (values: Iterable<string>) => [...values].sort(compare)
/** Code-point order: the same on every machine, whatever its locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Connection settings that are secrets or derived from them: never exported. */
const SECRET_CONFIG = new Set(['password', 'password_set'])

/**
 * Reads the access model into a bundle: every datasource, or those named in `datasources`;
 * with `versions`, the version of each policy and decision function too (for conflict checks).
 * Admin accounts are not part of it (they manage the model; they are not subject to it).
 */
export async function exportBundle(
  store: BundleStore,
  options: { datasources?: readonly string[]; versions?: boolean } = {},
): Promise<PolicyBundle> {
  const versioned = (version: number) => (options.versions ? { version } : {})
  const [attributes, users, roles, functions, policies, datasources, providers] = await Promise.all(
    [
      allPages((page) => store.attributes.list({ page, page_size: 200 })),
      allPages((page) => store.users.list({ page, page_size: 200 })),
      allPages((page) => store.roles.list({ page, page_size: 200 })),
      allPages((page) => store.decisionFunctions.list({ page, page_size: 100 })),
      allPages((page) => store.policies.list({ page, page_size: 100 })),
      allPages((page) => store.datasources.list({ page, page_size: 200 })),
      allPages((page) => store.identityProviders.list({ page, page_size: 100 })),
    ],
  )
  const wanted = options.datasources ? new Set(options.datasources) : undefined
  for (const name of wanted ?? []) {
    if (!datasources.some((d) => d.name === name)) throw new Error(`datasource "${name}" not found`)
  }
  const functionNames = new Map(functions.map((f) => [f.id, f.name]))
  const bundleRoles: BundleRole[] = []
  for (const role of roles) {
    const detail = await store.roles.get(role.id)
    const memberWindows = windowsOf(
      detail.members,
      (m) => m.username,
      (m) => m,
    )
    bundleRoles.push({
      name: role.name,
      description: role.description,
      is_active: role.is_active,
      members: sorted(detail.members.map((m) => m.username)),
      ...(memberWindows ? { member_windows: memberWindows } : {}),
      parents: sorted(detail.parent_roles.map((p) => p.name)),
      ...(role.limits ? { limits: role.limits } : {}),
    })
  }
  const bundleDatasources: BundleDatasource[] = []
  for (const ds of datasources) {
    if (wanted && !wanted.has(ds.name)) continue
    const access = await store.access.get(ds.id)
    const assignments = await store.assignments.list(ds.id)
    const tags = (await store.catalogTags.list(ds.id)).map((o) => ({
      schema: o.schema_name,
      table: o.table_name,
      column: o.column_name,
      tags: o.tags,
    }))
    const config = Object.fromEntries(
      Object.entries(ds.config)
        .filter(([key]) => !SECRET_CONFIG.has(key))
        .sort(([a], [b]) => compare(a, b)),
    )
    bundleDatasources.push({
      name: ds.name,
      ds_type: ds.ds_type,
      access_mode: ds.access_mode,
      is_active: ds.is_active,
      statement_timeout_ms: ds.statement_timeout_ms,
      pool_size: ds.pool_size,
      pool_mode: ds.pool_mode,
      config,
      access: {
        all: access.all,
        users: sorted(access.users.map((u) => u.username)),
        roles: sorted(access.roles.map((r) => r.name)),
        ...accessWindows(access),
      },
      assignments: assignments
        .map((a) => ({
          policy: a.policy_name,
          scope: a.scope,
          user: a.username,
          role: a.role_name,
          priority: a.priority,
          ...(canonicalWindow(a) ?? {}),
        }))
        .sort((a, b) => compare(assignmentKey(a), assignmentKey(b))),
      ...(tags.length > 0 ? { tags } : {}),
    })
  }
  return {
    version: BUNDLE_VERSION,
    attribute_definitions: attributes
      .map((a) => ({
        key: a.key,
        entity_type: a.entity_type,
        value_type: a.value_type,
        display_name: a.display_name,
        default_value: a.default_value ?? null,
        allowed_values: a.allowed_values,
        description: a.description,
      }))
      .sort((a, b) => compare(`${a.entity_type}:${a.key}`, `${b.entity_type}:${b.key}`)),
    users: users
      .filter((u) => !u.is_admin)
      .map((u) => ({
        username: u.username,
        is_active: u.is_active,
        email: u.email,
        display_name: u.display_name,
        attributes: Object.fromEntries(
          Object.entries(u.attributes).sort(([a], [b]) => compare(a, b)),
        ),
        ...(u.limits ? { limits: u.limits } : {}),
      }))
      .sort((a, b) => compare(a.username, b.username)),
    roles: bundleRoles.sort(byName),
    decision_functions: functions
      .map((f) => ({
        name: f.name,
        description: f.description,
        language: f.language,
        evaluate_context: f.evaluate_context,
        on_error: f.on_error,
        log_level: f.log_level,
        is_enabled: f.is_enabled,
        decision_config: f.decision_config ?? {},
        source: f.decision_fn,
        ...versioned(f.version),
      }))
      .sort(byName),
    policies: policies
      .map((p) => ({
        name: p.name,
        description: p.description,
        policy_type: p.policy_type,
        targets: p.targets,
        filter_expression: p.filter_expression,
        mask_expression: p.mask_expression,
        ...aggregationFields(p),
        decision_function: p.decision_function_id
          ? (functionNames.get(p.decision_function_id) ?? null)
          : null,
        is_enabled: p.is_enabled,
        enforcement: p.enforcement,
        ...versioned(p.version),
      }))
      .sort(byName),
    datasources: bundleDatasources.sort(byName),
    identity_providers: bundleIdentityProviders(
      providers,
      new Map(roles.map((r) => [r.id, r.name])),
    ),
  }
}

/** `min_group_size` and `allowed_aggregates` of an aggregation policy; nothing for other types. */
function aggregationFields(p: {
  policy_type: string
  min_group_size: number | null
  allowed_aggregates: string[] | null
}): Pick<BundlePolicy, 'min_group_size' | 'allowed_aggregates'> {
  if (p.policy_type !== 'aggregation') return {}
  return {
    ...(p.min_group_size === null ? {} : { min_group_size: p.min_group_size }),
    allowed_aggregates: [...(p.allowed_aggregates ?? [])].sort(),
  }
}

/** What identifies an assignment in a bundle: policy, scope, whom, priority and window. */
export function assignmentKey(a: BundleAssignment): string {
  const w = canonicalWindow(a)
  return [
    a.policy,
    a.scope,
    a.user ?? '',
    a.role ?? '',
    String(a.priority),
    w?.valid_from ?? '',
    w?.valid_until ?? '',
  ].join('\u0000')
}

/** The `windows` of a datasource's access, when any row is time-bound. */
function accessWindows(access: Awaited<ReturnType<BundleStore['access']['get']>>): {
  windows?: { users?: BundleWindows; roles?: BundleWindows }
} {
  const users = windowsOf(
    access.users,
    (u) => u.username,
    (u) => u,
  )
  const roles = windowsOf(
    access.roles,
    (r) => r.name,
    (r) => r,
  )
  if (!users && !roles) return {}
  return { windows: { ...(users ? { users } : {}), ...(roles ? { roles } : {}) } }
}
