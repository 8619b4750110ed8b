import type { ChangeNotice, Store, StoreError } from '../src/index.js'
import { isStoreError } from '../src/index.js'

/** The actor of the very first admin, before any user exists. */
export const SYSTEM_ACTOR = '00000000-0000-0000-0000-000000000000'

/** A password that satisfies docs/resources.md#users. */
export const PASSWORD = 'Correct-Horse-9'

let n = 0
/** A name unique within the run, so tests sharing a store never collide. */
export function unique(prefix: string): string {
  n++
  return `${prefix}${n}x${Math.random().toString(36).slice(2, 7)}`
}

/** Awaits a rejection and returns it as a StoreError, failing when it is anything else. */
export async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  try {
    await promise
  } catch (error) {
    if (isStoreError(error)) return error
    throw error
  }
  throw new Error('expected the call to fail')
}

/** Runs `fn` and checks that it wrote no admin-audit entry. */
export async function expectNoAudit(store: Store, fn: () => Promise<unknown>): Promise<StoreError> {
  const before = await store.audit.admin.count()
  const error = await storeError(fn())
  const after = await store.audit.admin.count()
  if (after !== before) throw new Error(`audit count changed from ${before} to ${after}`)
  return error
}

/** Collects change notices while `fn` runs. */
export async function captureChanges(
  store: Store,
  fn: () => Promise<unknown>,
): Promise<ChangeNotice[]> {
  const seen: ChangeNotice[] = []
  const stop = store.changes.subscribe((e) => seen.push(e))
  try {
    await fn()
  } finally {
    stop()
  }
  return seen
}

/** Creates the first admin with the system actor. */
export async function bootstrapAdmin(store: Store) {
  return store.users.create(
    { username: unique('admin'), password: PASSWORD, is_admin: true },
    SYSTEM_ACTOR,
  )
}

/** The first admin, a user and an embedded datasource that user may connect to. */
export async function userWithDatasource(store: Store) {
  const admin = await bootstrapAdmin(store)
  const user = await store.users.create({ username: unique('u'), password: PASSWORD }, admin.id)
  const ds = await store.datasources.create(
    { name: unique('wide'), ds_type: 'pglite', config: {} },
    admin.id,
  )
  await store.access.setUsers(ds.id, { user_ids: [user.id] }, admin.id)
  return { admin, user, ds }
}

/** Latest admin-audit entries of one resource, newest first, with parsed changes. */
export async function auditOf(store: Store, resourceId: string) {
  const page = await store.audit.admin.list({ resource_id: resourceId, page_size: 200 })
  return page.data.map((e) => ({ ...e, changes: e.changes ? JSON.parse(e.changes) : null }))
}
