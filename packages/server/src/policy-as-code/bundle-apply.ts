import { randomBytes } from 'node:crypto'
import type { ScopedStore, Store } from '@palisade/store'
import { ApiError, storeStepAt } from '../http/api-error.js'
import {
  allPages,
  assignmentKey,
  BUNDLE_VERSION,
  type BundleDatasource,
  exportBundle,
  type PolicyBundle,
} from './bundle-export.js'
import { applyTags, normalizeObjectTags } from './bundle-tags.js'
import {
  applyAccessWindows,
  canonicalWindow,
  normalizeAccessWindows,
  normalizeWindows,
  optional,
  windowBody,
  windowChanged,
} from './bundle-windows.js'

/** One step of a plan. */
export interface PlanStep {
  /** `conflict`: the bundle was made from an older version of the object (dry run only). */
  action: 'create' | 'update' | 'delete' | 'conflict'
  kind:
    | 'attribute_definition'
    | 'user'
    | 'role'
    | 'decision_function'
    | 'policy'
    | 'datasource'
    | 'datasource_access'
    | 'role_member'
    | 'role_parent'
    | 'assignment'
    | 'catalog_tag'
  name: string
  /** For updates: the fields that change. */
  fields?: string[]
}

export interface BundlePlan {
  dry_run: boolean
  steps: PlanStep[]
  summary: { create: number; update: number; delete: number; conflict: number }
}

/** JSON with object keys sorted, so two equal objects always print the same. */
function stable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  )
}

/** The fields of `want` whose values differ from `have` (compared as stable JSON). */
function changedFields(have: object, want: object, skip: readonly string[] = []): string[] {
  const h = have as Record<string, unknown>
  const w = want as Record<string, unknown>
  return Object.keys(w).filter((k) => !skip.includes(k) && stable(h[k]) !== stable(w[k]))
}

const pick = (value: object, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, (value as Record<string, unknown>)[f]]))

/** Fills what a hand-written bundle may leave out, so it compares with an export. */
export function normalizeBundle(input: unknown): PolicyBundle {
  const b = (input ?? {}) as Partial<PolicyBundle>
  if (b.version !== BUNDLE_VERSION) {
    throw new ApiError(422, 'validation_failed', 'request body is invalid', [
      { field: 'version', code: 'invalid', message: `must be ${BUNDLE_VERSION}` },
    ])
  }
  const list = <T>(v: T[] | undefined) => (Array.isArray(v) ? v : [])
  return {
    version: BUNDLE_VERSION,
    attribute_definitions: list(b.attribute_definitions).map((a) => ({
      key: a.key,
      entity_type: a.entity_type ?? 'user',
      value_type: a.value_type,
      display_name: a.display_name ?? a.key,
      default_value: a.default_value ?? null,
      allowed_values: a.allowed_values ?? null,
      description: a.description ?? null,
    })),
    users: list(b.users).map((u) => ({
      username: u.username,
      is_active: u.is_active ?? true,
      email: u.email ?? null,
      display_name: u.display_name ?? null,
      attributes: u.attributes ?? {},
    })),
    roles: list(b.roles).map((r) => ({
      name: r.name,
      description: r.description ?? null,
      is_active: r.is_active ?? true,
      members: [...(r.members ?? [])].sort(),
      ...optional('member_windows', normalizeWindows(r.member_windows)),
      parents: [...(r.parents ?? [])].sort(),
    })),
    decision_functions: list(b.decision_functions).map((f) => ({
      name: f.name,
      description: f.description ?? null,
      language: f.language ?? 'javascript',
      evaluate_context: f.evaluate_context,
      on_error: f.on_error ?? 'deny',
      log_level: f.log_level ?? 'off',
      is_enabled: f.is_enabled ?? true,
      decision_config: f.decision_config ?? {},
      source: f.source,
      ...(typeof f.version === 'number' ? { version: f.version } : {}),
    })),
    policies: list(b.policies).map((p) => ({
      name: p.name,
      description: p.description ?? null,
      policy_type: p.policy_type,
      targets: p.targets,
      filter_expression: p.filter_expression ?? null,
      mask_expression: p.mask_expression ?? null,
      decision_function: p.decision_function ?? null,
      is_enabled: p.is_enabled ?? true,
      enforcement: p.enforcement ?? 'enforce',
      ...(typeof p.version === 'number' ? { version: p.version } : {}),
    })),
    datasources: list(b.datasources).map((d) => ({
      name: d.name,
      ds_type: d.ds_type,
      access_mode: d.access_mode ?? 'policy_required',
      is_active: d.is_active ?? true,
      statement_timeout_ms: d.statement_timeout_ms ?? 30_000,
      pool_size: d.pool_size ?? 10,
      pool_mode: d.pool_mode ?? null,
      config: d.config ?? {},
      access: {
        all: d.access?.all ?? false,
        users: [...(d.access?.users ?? [])].sort(),
        roles: [...(d.access?.roles ?? [])].sort(),
        ...normalizeAccessWindows(d.access?.windows),
      },
      assignments: list(d.assignments).map((a) => ({
        policy: a.policy,
        scope: a.scope ?? 'all',
        user: a.user ?? null,
        role: a.role ?? null,
        priority: a.priority ?? 100,
        ...(canonicalWindow(a) ?? {}),
      })),
      ...optional('tags', normalizeObjectTags(d.tags)),
    })),
  }
}

/**
 * Brings the store to the bundle in one store transaction, every step audited: creates and
 * updates what differs, deletes policies, decision functions, roles and attribute definitions
 * the bundle no longer lists (users are never deleted; datasources not in the bundle are left
 * alone). With `dryRun` the same steps run and are rolled back, so the plan is also validated.
 * Applying the same bundle twice changes nothing the second time.
 */
export async function applyBundle(
  store: Store,
  input: unknown,
  actorId: string,
  options: { dryRun: boolean },
): Promise<BundlePlan> {
  const bundle = normalizeBundle(input)
  const steps = await store.transaction(
    async (scoped) => {
      const done: PlanStep[] = []
      const conflicts = await versionConflicts(scoped, bundle)
      if (conflicts.length > 0 && !options.dryRun) {
        throw new ApiError(
          409,
          'version_conflict',
          'the bundle was made from older versions of some objects; export again and reapply',
          conflicts.map((c) => ({ field: c.field, code: 'version_conflict', message: c.message })),
        )
      }
      for (const c of conflicts) done.push(c.step)
      await applySteps(scoped, bundle, actorId, done)
      return done
    },
    { rollback: options.dryRun },
  )
  const count = (action: PlanStep['action']) => steps.filter((s) => s.action === action).length
  return {
    dry_run: options.dryRun,
    steps,
    summary: {
      create: count('create'),
      update: count('update'),
      delete: count('delete'),
      conflict: count('conflict'),
    },
  }
}

/** Policies and decision functions whose `version` in the bundle is not the store's. */
async function versionConflicts(store: ScopedStore, bundle: PolicyBundle) {
  const out: { field: string; message: string; step: PlanStep }[] = []
  const check = (
    list: 'policies' | 'decision_functions',
    kind: PlanStep['kind'],
    wanted: { name: string; version?: number | undefined },
    have: { version: number } | undefined,
  ) => {
    if (wanted.version === undefined || have?.version === wanted.version) return
    const now = have ? `version ${have.version}` : 'no such object any more'
    out.push({
      field: `${list}[${wanted.name}].version`,
      message: `the bundle was made from version ${wanted.version}; the store has ${now}`,
      step: { action: 'conflict', kind, name: wanted.name, fields: ['version'] },
    })
  }
  const functions = await allPages((page) => store.decisionFunctions.list({ page, page_size: 100 }))
  for (const f of bundle.decision_functions) {
    check(
      'decision_functions',
      'decision_function',
      f,
      functions.find((x) => x.name === f.name),
    )
  }
  const policies = await allPages((page) => store.policies.list({ page, page_size: 100 }))
  for (const p of bundle.policies) {
    check(
      'policies',
      'policy',
      p,
      policies.find((x) => x.name === p.name),
    )
  }
  return out
}

async function applySteps(
  store: ScopedStore,
  bundle: PolicyBundle,
  actorId: string,
  done: PlanStep[],
): Promise<void> {
  const current = await exportBundle(store)
  const note = (s: PlanStep) => done.push(s)

  // Attribute definitions first: user attributes are checked against them.
  const attributes = await allPages((page) => store.attributes.list({ page, page_size: 200 }))
  const attrId = (a: { key: string; entity_type: string }) =>
    attributes.find((x) => x.key === a.key && x.entity_type === a.entity_type)?.id
  for (const a of bundle.attribute_definitions) {
    const name = `${a.entity_type}:${a.key}`
    const have = current.attribute_definitions.find(
      (x) => x.key === a.key && x.entity_type === a.entity_type,
    )
    if (!have) {
      await storeStepAt(`attribute_definitions[${name}]`, () => store.attributes.create(a, actorId))
      note({ action: 'create', kind: 'attribute_definition', name })
      continue
    }
    const fields = changedFields(have, a, ['key', 'entity_type'])
    if (fields.length === 0) continue
    await storeStepAt(`attribute_definitions[${name}]`, () =>
      store.attributes.update(attrId(a) as string, pick(a, fields), actorId),
    )
    note({ action: 'update', kind: 'attribute_definition', name, fields })
  }

  // Users: created without a usable password (an admin sets one), never deleted.
  for (const u of bundle.users) {
    const existing = await store.users.findByUsername(u.username)
    if (!existing) {
      const password = `${randomBytes(24).toString('base64url')}aA1!`
      await storeStepAt(`users[${u.username}]`, () =>
        store.users.create({ ...u, password }, actorId),
      )
      note({ action: 'create', kind: 'user', name: u.username })
      continue
    }
    const have = current.users.find((x) => x.username === u.username) ?? {}
    const fields = changedFields(have, u, ['username'])
    if (fields.length === 0) continue
    await storeStepAt(`users[${u.username}]`, () =>
      store.users.update(existing.id, pick(u, fields), actorId),
    )
    note({ action: 'update', kind: 'user', name: u.username, fields })
  }
  const userId = async (username: string, where: string) => {
    const user = await store.users.findByUsername(username)
    if (!user) throw unknownName(where, `user "${username}" does not exist`)
    return user.id
  }

  // Roles, then their members and parents once every role exists.
  const roleIds = new Map(
    (await allPages((page) => store.roles.list({ page, page_size: 200 }))).map((r) => [
      r.name,
      r.id,
    ]),
  )
  for (const r of bundle.roles) {
    const have = current.roles.find((x) => x.name === r.name)
    const fields = ['description', 'is_active']
    if (!have) {
      const created = await storeStepAt(`roles[${r.name}]`, () =>
        store.roles.create({ name: r.name, ...pick(r, fields) }, actorId),
      )
      roleIds.set(r.name, created.id)
      note({ action: 'create', kind: 'role', name: r.name })
      continue
    }
    const changed = changedFields(pick(have, fields), pick(r, fields))
    if (changed.length === 0) continue
    await storeStepAt(`roles[${r.name}]`, () =>
      store.roles.update(roleIds.get(r.name) as string, pick(r, changed), actorId),
    )
    note({ action: 'update', kind: 'role', name: r.name, fields: changed })
  }
  const roleId = (name: string, where: string) => {
    const id = roleIds.get(name)
    if (!id) throw unknownName(where, `role "${name}" is not in the bundle or the store`)
    return id
  }
  for (const r of bundle.roles) {
    const have = current.roles.find((x) => x.name === r.name)
    const id = roleId(r.name, `roles[${r.name}]`)
    for (const member of r.members) {
      const isNew = !have?.members.includes(member)
      const window = r.member_windows?.[member]
      if (!isNew && !windowChanged(window, have?.member_windows?.[member])) continue
      const uid = await userId(member, `roles[${r.name}].members`)
      await storeStepAt(`roles[${r.name}].members`, () =>
        isNew && !window
          ? store.roles.addMembers(id, { user_ids: [uid] }, actorId)
          : store.roles.putMember(id, uid, windowBody(window), actorId),
      )
      note({
        action: isNew ? 'create' : 'update',
        kind: 'role_member',
        name: `${r.name} ← ${member}`,
        ...(isNew ? {} : { fields: ['window'] }),
      })
    }
    for (const member of (have?.members ?? []).filter((m) => !r.members.includes(m))) {
      const uid = await userId(member, `roles[${r.name}].members`)
      await storeStepAt(`roles[${r.name}].members`, () =>
        store.roles.removeMember(id, uid, actorId),
      )
      note({ action: 'delete', kind: 'role_member', name: `${r.name} ← ${member}` })
    }
    for (const parent of r.parents.filter((p) => !have?.parents.includes(p))) {
      const pid = roleId(parent, `roles[${r.name}].parents`)
      await storeStepAt(`roles[${r.name}].parents`, () =>
        store.roles.addParent(id, { parent_role_id: pid }, actorId),
      )
      note({ action: 'create', kind: 'role_parent', name: `${r.name} → ${parent}` })
    }
    for (const parent of (have?.parents ?? []).filter((p) => !r.parents.includes(p))) {
      const pid = roleId(parent, `roles[${r.name}].parents`)
      await storeStepAt(`roles[${r.name}].parents`, () =>
        store.roles.removeParent(id, pid, actorId),
      )
      note({ action: 'delete', kind: 'role_parent', name: `${r.name} → ${parent}` })
    }
  }

  // Decision functions, then the policies that use them.
  const functions = await allPages((page) => store.decisionFunctions.list({ page, page_size: 100 }))
  const functionIds = new Map(functions.map((f) => [f.name, f]))
  for (const f of bundle.decision_functions) {
    const { source, version: _version, ...rest } = f
    const body = { ...rest, decision_fn: source }
    const have = functionIds.get(f.name)
    if (!have) {
      const created = await storeStepAt(`decision_functions[${f.name}]`, () =>
        store.decisionFunctions.create(body as never, actorId),
      )
      functionIds.set(f.name, created)
      note({ action: 'create', kind: 'decision_function', name: f.name })
      continue
    }
    const was = current.decision_functions.find((x) => x.name === f.name) ?? {}
    const fields = changedFields(was, f, ['name', 'version'])
    if (fields.length === 0) continue
    const update = pick(
      body,
      fields.map((x) => (x === 'source' ? 'decision_fn' : x)),
    )
    await storeStepAt(`decision_functions[${f.name}]`, () =>
      store.decisionFunctions.update(
        have.id,
        { ...update, version: have.version } as never,
        actorId,
      ),
    )
    note({ action: 'update', kind: 'decision_function', name: f.name, fields })
  }
  const policies = await allPages((page) => store.policies.list({ page, page_size: 100 }))
  const policyIds = new Map(policies.map((p) => [p.name, p]))
  for (const p of bundle.policies) {
    const { decision_function, version: _version, ...rest } = p
    let fnId: string | null = null
    if (decision_function !== null) {
      const fn = functionIds.get(decision_function)
      if (!fn) {
        throw unknownName(
          `policies[${p.name}].decision_function`,
          `decision function "${decision_function}" is not in the bundle or the store`,
        )
      }
      fnId = fn.id
    }
    const body = { ...rest, decision_function_id: fnId }
    const have = policyIds.get(p.name)
    if (!have) {
      const created = await storeStepAt(`policies[${p.name}]`, () =>
        store.policies.create(body as never, actorId),
      )
      policyIds.set(p.name, created)
      note({ action: 'create', kind: 'policy', name: p.name })
      continue
    }
    const was = current.policies.find((x) => x.name === p.name) ?? {}
    const fields = changedFields(was, p, ['name', 'version'])
    if (fields.length === 0) continue
    const update = pick(
      body,
      fields.map((x) => (x === 'decision_function' ? 'decision_function_id' : x)),
    )
    await storeStepAt(`policies[${p.name}]`, () =>
      store.policies.update(have.id, { ...update, version: have.version } as never, actorId),
    )
    note({ action: 'update', kind: 'policy', name: p.name, fields })
  }

  // Datasources, their access and their assignments.
  for (const d of bundle.datasources) {
    await applyDatasource(store, d, current, actorId, note, {
      userId,
      roleId,
      policyId: (name, where) => {
        const policy = policyIds.get(name)
        if (!policy) throw unknownName(where, `policy "${name}" is not in the bundle`)
        return policy.id
      },
    })
  }

  // What the bundle no longer lists, dependents first.
  for (const p of current.policies.filter((x) => !bundle.policies.some((y) => y.name === x.name))) {
    await storeStepAt(`policies[${p.name}]`, () =>
      store.policies.delete((policyIds.get(p.name) as { id: string }).id, actorId),
    )
    note({ action: 'delete', kind: 'policy', name: p.name })
  }
  for (const f of current.decision_functions.filter(
    (x) => !bundle.decision_functions.some((y) => y.name === x.name),
  )) {
    await storeStepAt(`decision_functions[${f.name}]`, () =>
      store.decisionFunctions.delete((functionIds.get(f.name) as { id: string }).id, actorId),
    )
    note({ action: 'delete', kind: 'decision_function', name: f.name })
  }
  for (const r of current.roles.filter((x) => !bundle.roles.some((y) => y.name === x.name))) {
    await storeStepAt(`roles[${r.name}]`, () =>
      store.roles.delete(roleIds.get(r.name) as string, actorId),
    )
    note({ action: 'delete', kind: 'role', name: r.name })
  }
  for (const a of current.attribute_definitions.filter(
    (x) =>
      !bundle.attribute_definitions.some((y) => y.key === x.key && y.entity_type === x.entity_type),
  )) {
    const name = `${a.entity_type}:${a.key}`
    await storeStepAt(`attribute_definitions[${name}]`, () =>
      store.attributes.delete(attrId(a) as string, { force: true }, actorId),
    )
    note({ action: 'delete', kind: 'attribute_definition', name })
  }
}

interface Resolvers {
  userId(username: string, where: string): Promise<string>
  roleId(name: string, where: string): string
  policyId(name: string, where: string): string
}

async function applyDatasource(
  store: ScopedStore,
  d: BundleDatasource,
  current: PolicyBundle,
  actorId: string,
  note: (s: PlanStep) => void,
  resolve: Resolvers,
): Promise<void> {
  const where = `datasources[${d.name}]`
  const settings = [
    'ds_type',
    'access_mode',
    'is_active',
    'statement_timeout_ms',
    'pool_size',
    'pool_mode',
    'config',
  ]
  let ds = await store.datasources.findByName(d.name)
  const have = current.datasources.find((x) => x.name === d.name)
  if (!ds) {
    ds = await storeStepAt(where, () =>
      store.datasources.create({ name: d.name, ...pick(d, settings) } as never, actorId),
    )
    note({ action: 'create', kind: 'datasource', name: d.name })
  } else if (have) {
    const fields = changedFields(pick(have, settings), pick(d, settings))
    if (fields.length > 0) {
      const id = ds.id
      await storeStepAt(where, () =>
        store.datasources.update(id, pick(d, fields) as never, actorId),
      )
      note({ action: 'update', kind: 'datasource', name: d.name, fields })
    }
  }
  const id = ds.id
  const summary = await store.access.get(id)
  const access = {
    all: summary.all,
    users: summary.users.map((u) => u.username).sort(),
    roles: summary.roles.map((r) => r.name).sort(),
  }
  if (access.all !== d.access.all) {
    await storeStepAt(`${where}.access`, () =>
      store.access.setAll(id, { enabled: d.access.all }, actorId),
    )
    note({ action: 'update', kind: 'datasource_access', name: `${d.name}: all`, fields: ['all'] })
  }
  if (stable(access.users) !== stable(d.access.users)) {
    const ids = await Promise.all(d.access.users.map((u) => resolve.userId(u, `${where}.access`)))
    await storeStepAt(`${where}.access`, () =>
      store.access.setUsers(id, { user_ids: ids }, actorId),
    )
    note({
      action: 'update',
      kind: 'datasource_access',
      name: `${d.name}: users`,
      fields: ['users'],
    })
  }
  if (stable(access.roles) !== stable(d.access.roles)) {
    const ids = d.access.roles.map((r) => resolve.roleId(r, `${where}.access`))
    await storeStepAt(`${where}.access`, () =>
      store.access.setRoles(id, { role_ids: ids }, actorId),
    )
    note({
      action: 'update',
      kind: 'datasource_access',
      name: `${d.name}: roles`,
      fields: ['roles'],
    })
  }
  await applyAccessWindows({
    store,
    datasourceId: id,
    datasourceName: d.name,
    want: d.access,
    have: summary,
    userId: (name) => resolve.userId(name, `${where}.access`),
    roleId: (name) => resolve.roleId(name, `${where}.access`),
    where,
    actorId,
    note,
  })
  await applyTags({
    store,
    datasourceId: id,
    datasourceName: d.name,
    want: d.tags,
    where,
    actorId,
    note,
  })
  const existing = await store.assignments.list(id)
  const wanted = new Set(d.assignments.map(assignmentKey))
  const keyOf = (a: (typeof existing)[number]): string =>
    assignmentKey({
      policy: a.policy_name,
      scope: a.scope,
      user: a.username,
      role: a.role_name,
      priority: a.priority,
      ...(canonicalWindow(a) ?? {}),
    })
  const present = new Set(existing.map(keyOf))
  for (const a of existing.filter((x) => !wanted.has(keyOf(x)))) {
    await storeStepAt(`${where}.assignments`, () => store.assignments.unassign(id, a.id, actorId))
    note({ action: 'delete', kind: 'assignment', name: describeAssignment(d.name, keyOf(a)) })
  }
  for (const a of d.assignments.filter((x) => !present.has(assignmentKey(x)))) {
    const body = {
      policy_id: resolve.policyId(a.policy, `${where}.assignments`),
      scope: a.scope,
      user_id: a.user === null ? null : await resolve.userId(a.user, `${where}.assignments`),
      role_id: a.role === null ? null : resolve.roleId(a.role, `${where}.assignments`),
      priority: a.priority,
      ...windowBody(a),
    }
    await storeStepAt(`${where}.assignments`, () => store.assignments.assign(id, body, actorId))
    note({
      action: 'create',
      kind: 'assignment',
      name: describeAssignment(d.name, assignmentKey(a)),
    })
  }
}

function describeAssignment(datasource: string, key: string): string {
  const [policy, scope, user, role, priority, from, until] = key.split('\u0000')
  const whom = scope === 'all' ? 'all' : scope === 'user' ? `user ${user}` : `role ${role}`
  const window = `${from ? `, from ${from}` : ''}${until ? `, until ${until}` : ''}`
  return `${datasource}: ${policy} → ${whom} (priority ${priority}${window})`
}

function unknownName(field: string, message: string): ApiError {
  return new ApiError(422, 'validation_failed', 'request body is invalid', [
    { field, code: 'not_found', message },
  ])
}
