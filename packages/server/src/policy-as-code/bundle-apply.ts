import { randomBytes } from 'node:crypto'
import type { ScopedStore, Store } from '@palisade/store'
import { ApiError, storeStepAt } from '../http/api-error.js'
import { applyDatasource, unknownName } from './bundle-apply-datasource.js'
import { allPages, exportBundle, type PolicyBundle } from './bundle-export.js'
import { applyIdentityProviders } from './bundle-identity-providers.js'
import { normalizeBundle } from './bundle-normalize.js'
import { type BundlePlan, changedFields, type PlanStep, pick } from './bundle-plan.js'
import { windowBody, windowChanged } from './bundle-windows.js'

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
      store.users.update(existing.id, withWholeLimits(pick(u, fields)), actorId),
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
    const fields = ['description', 'is_active', ...('limits' in r ? ['limits'] : [])]
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
      store.roles.update(roleIds.get(r.name) as string, withWholeLimits(pick(r, changed)), actorId),
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

  // Identity providers, once every role their mappings name exists.
  await applyIdentityProviders(
    store,
    bundle.identity_providers,
    current.identity_providers,
    actorId,
    note,
    roleId,
  )

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

/**
 * A bundle's `limits` replace the stored ones whole (an update alone changes only the keys it
 * sends): every key is sent, null where the bundle has none.
 */
function withWholeLimits(body: Record<string, unknown>): Record<string, unknown> {
  if (!('limits' in body) || !body['limits']) return body
  const limits = body['limits'] as Record<string, unknown>
  return {
    ...body,
    limits: {
      max_rows_per_statement: limits['max_rows_per_statement'] ?? null,
      on_row_limit: limits['on_row_limit'] ?? null,
      max_statements_per_minute: limits['max_statements_per_minute'] ?? null,
      max_concurrent_statements: limits['max_concurrent_statements'] ?? null,
    },
  }
}
