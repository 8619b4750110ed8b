import type { DatasourceAccessSummary, ScopedStore } from '@palisade/store'
import { storeStepAt } from '../http/api-error.js'

/**
 * Validity windows in policy bundles (docs/policy-as-code.md): a time-bound membership, access
 * row or assignment carries `valid_from`/`valid_until`; a lasting one carries nothing, so
 * bundles without time-bound grants look exactly as before.
 */

/** A grant's window in a bundle; absent bounds are open. */
export interface BundleWindow {
  valid_from?: string | null
  valid_until?: string | null
}

/** Windows of time-bound grants by user or role name (omitted when there are none). */
export type BundleWindows = Record<string, BundleWindow>

/** The window in one canonical form (UTC ISO bounds, nulls dropped), or null when open. */
export function canonicalWindow(w: BundleWindow | null | undefined): BundleWindow | null {
  const iso = (s: string | null | undefined) => (s ? new Date(s).toISOString() : null)
  const from = iso(w?.valid_from)
  const until = iso(w?.valid_until)
  if (!from && !until) return null
  return { ...(from ? { valid_from: from } : {}), ...(until ? { valid_until: until } : {}) }
}

/** Whether two windows differ once canonical. */
export function windowChanged(
  a: BundleWindow | null | undefined,
  b: BundleWindow | null | undefined,
) {
  return JSON.stringify(canonicalWindow(a)) !== JSON.stringify(canonicalWindow(b))
}

/** Collects the windows of time-bound entries, sorted by name; undefined when all are lasting. */
export function windowsOf<T>(
  items: readonly T[],
  name: (item: T) => string,
  window: (item: T) => BundleWindow,
): BundleWindows | undefined {
  const entries = items
    .map((item) => [name(item), canonicalWindow(window(item))] as const)
    .filter((e): e is readonly [string, BundleWindow] => e[1] !== null)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return entries.length === 0 ? undefined : Object.fromEntries(entries)
}

/** A hand-written windows map in canonical form (entries with open windows dropped). */
export function normalizeWindows(input: unknown): BundleWindows | undefined {
  if (input === null || typeof input !== 'object') return undefined
  return windowsOf(
    Object.entries(input as Record<string, BundleWindow>),
    ([name]) => name,
    ([, w]) => w,
  )
}

/** The request-body form of a window: both bounds, null when open. */
export function windowBody(w: BundleWindow | null | undefined): {
  valid_from: string | null
  valid_until: string | null
} {
  const c = canonicalWindow(w)
  return { valid_from: c?.valid_from ?? null, valid_until: c?.valid_until ?? null }
}

/** A datasource's access windows in a hand-written bundle, canonical. */
export function normalizeAccessWindows(input: unknown): {
  windows?: { users?: BundleWindows; roles?: BundleWindows }
} {
  const w = (input ?? {}) as { users?: unknown; roles?: unknown }
  const users = normalizeWindows(w.users)
  const roles = normalizeWindows(w.roles)
  if (!users && !roles) return {}
  return { windows: { ...(users ? { users } : {}), ...(roles ? { roles } : {}) } }
}

/** `{ [key]: value }` when the value is there, else nothing (keeps absent fields absent). */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
}

/** What applying access windows needs from the rest of the apply. */
export interface AccessWindowApply {
  store: Pick<ScopedStore, 'access'>
  datasourceId: string
  datasourceName: string
  /** The bundle's access lists and windows. */
  want: {
    users: string[]
    roles: string[]
    windows?: { users?: BundleWindows; roles?: BundleWindows }
  }
  /** The access rows before the lists were replaced (`store.access.get`). */
  have: DatasourceAccessSummary
  userId(name: string): Promise<string>
  roleId(name: string): string
  where: string
  actorId: string
  note(step: { action: 'update'; kind: 'datasource_access'; name: string; fields: string[] }): void
}

/**
 * Gives each listed user and role the window the bundle names (the list replacement keeps the
 * windows of rows that stay and adds new rows as lasting ones).
 */
export async function applyAccessWindows(a: AccessWindowApply): Promise<void> {
  const kinds = [
    {
      scope: 'user' as const,
      names: a.want.users,
      have: a.have.users.map((u) => [u.username, u] as const),
    },
    {
      scope: 'role' as const,
      names: a.want.roles,
      have: a.have.roles.map((r) => [r.name, r] as const),
    },
  ]
  for (const { scope, names, have } of kinds) {
    const before = new Map<string, BundleWindow>(have)
    const wanted = a.want.windows?.[scope === 'user' ? 'users' : 'roles'] ?? {}
    for (const name of names) {
      if (!windowChanged(wanted[name], before.get(name))) continue
      const id = scope === 'user' ? await a.userId(name) : a.roleId(name)
      await storeStepAt(`${a.where}.access`, () =>
        a.store.access.grant(a.datasourceId, { scope, id }, windowBody(wanted[name]), a.actorId),
      )
      a.note({
        action: 'update',
        kind: 'datasource_access',
        name: `${a.datasourceName}: ${scope} ${name}`,
        fields: ['window'],
      })
    }
  }
}
