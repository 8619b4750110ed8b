import type { ScopedStore } from '@palisade/store'
import { ApiError, storeStepAt } from '../http/api-error.js'
import { assignmentKey, type BundleDatasource, type PolicyBundle } from './bundle-export.js'
import { changedFields, type PlanStep, pick, stable } from './bundle-plan.js'
import { applyTags } from './bundle-tags.js'
import { applyAccessWindows, canonicalWindow, windowBody } from './bundle-windows.js'

export interface Resolvers {
  userId(username: string, where: string): Promise<string>
  roleId(name: string, where: string): string
  policyId(name: string, where: string): string
}

export async function applyDatasource(
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

export function unknownName(field: string, message: string): ApiError {
  return new ApiError(422, 'validation_failed', 'request body is invalid', [
    { field, code: 'not_found', message },
  ])
}
