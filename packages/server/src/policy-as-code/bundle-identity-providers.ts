import type { IdentityProvider } from '@palisade/store'
import { storeStepAt } from '../http/api-error.js'
import type { BundleStore } from './bundle-export.js'
import { changedFields, type PlanStep, pick } from './bundle-plan.js'

/**
 * An identity provider in a bundle (docs/sso.md, docs/policy-as-code.md): its settings and
 * mappings with roles by name. The client secret is never in a bundle: applying keeps the stored
 * one, and a provider the bundle creates has none until an admin sets it, as with datasource
 * passwords.
 */
export interface BundleIdentityProvider {
  name: string
  issuer: string
  client_id: string
  audiences: string[]
  username_claim: string | null
  role_claim: string
  attribute_mappings: { claim: string; attribute: string }[]
  role_mappings: { value: string; role: string }[]
  jit_users: boolean
  is_active: boolean
  console_sign_in: boolean
  admin_claim: { claim: string; value: string } | null
}

/** The settings compared and written; the name identifies the provider. */
const SETTINGS = [
  'issuer',
  'client_id',
  'audiences',
  'username_claim',
  'role_claim',
  'attribute_mappings',
  'role_mappings',
  'jit_users',
  'is_active',
  'console_sign_in',
  'admin_claim',
] as const

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Mappings in one order, so an export and a hand-written bundle compare equal. */
function sortedMappings(p: Pick<BundleIdentityProvider, 'attribute_mappings' | 'role_mappings'>) {
  return {
    attribute_mappings: [...p.attribute_mappings].sort(
      (a, b) => compare(a.attribute, b.attribute) || compare(a.claim, b.claim),
    ),
    role_mappings: [...p.role_mappings].sort(
      (a, b) => compare(a.value, b.value) || compare(a.role, b.role),
    ),
  }
}

/** The store's providers as bundle entries, by name; `roleNames` maps role ids to names. */
export function bundleIdentityProviders(
  providers: readonly IdentityProvider[],
  roleNames: ReadonlyMap<string, string>,
): BundleIdentityProvider[] {
  return providers
    .map((p) => {
      const entry: BundleIdentityProvider = {
        name: p.name,
        issuer: p.issuer,
        client_id: p.client_id,
        audiences: [...p.audiences].sort(compare),
        username_claim: p.username_claim,
        role_claim: p.role_claim,
        attribute_mappings: p.attribute_mappings.map((m) => ({
          claim: m.claim,
          attribute: m.attribute,
        })),
        role_mappings: p.role_mappings.map((m) => ({
          value: m.value,
          role: roleNames.get(m.role_id) ?? m.role_id,
        })),
        jit_users: p.jit_users,
        is_active: p.is_active,
        console_sign_in: p.console_sign_in,
        admin_claim: p.admin_claim,
      }
      return { ...entry, ...sortedMappings(entry) }
    })
    .sort((a, b) => compare(a.name, b.name))
}

/** Fills what a hand-written entry may leave out with the API's defaults. */
export function normalizeIdentityProvider(
  p: Partial<BundleIdentityProvider>,
): BundleIdentityProvider {
  const entry: BundleIdentityProvider = {
    name: p.name as string,
    issuer: p.issuer as string,
    client_id: p.client_id as string,
    audiences: [...(p.audiences ?? [])].sort(compare),
    username_claim: p.username_claim ?? null,
    role_claim: p.role_claim ?? 'groups',
    attribute_mappings: p.attribute_mappings ?? [],
    role_mappings: p.role_mappings ?? [],
    jit_users: p.jit_users ?? false,
    is_active: p.is_active ?? true,
    console_sign_in: p.console_sign_in ?? false,
    admin_claim: p.admin_claim ?? null,
  }
  return { ...entry, ...sortedMappings(entry) }
}

/**
 * Creates the bundle's providers the store lacks and updates those that differ (never their
 * secret). Providers the bundle does not list are left alone, as datasources are: deleting one
 * would end its users' links and claim-granted roles.
 */
export async function applyIdentityProviders(
  store: BundleStore,
  wanted: readonly BundleIdentityProvider[],
  current: readonly BundleIdentityProvider[],
  actorId: string,
  note: (s: PlanStep) => void,
  roleId: (name: string, where: string) => string,
): Promise<void> {
  const stored = new Map<string, string>()
  for (let page = 1; ; page++) {
    const { data, total } = await store.identityProviders.list({ page, page_size: 100 })
    for (const p of data) stored.set(p.name, p.id)
    if (data.length === 0 || stored.size >= total) break
  }
  for (const p of wanted) {
    const where = `identity_providers[${p.name}]`
    // Role names resolve before the store step, so a refusal names the bundle's own path.
    const body = (fields: readonly string[]) => {
      const out = pick(p, fields)
      if ('role_mappings' in out) {
        out['role_mappings'] = p.role_mappings.map((m) => ({
          value: m.value,
          role_id: roleId(m.role, `${where}.role_mappings`),
        }))
      }
      return out
    }
    const id = stored.get(p.name)
    const have = current.find((x) => x.name === p.name)
    if (!id || !have) {
      const input = { name: p.name, ...body(SETTINGS) }
      await storeStepAt(where, () => store.identityProviders.create(input as never, actorId))
      note({ action: 'create', kind: 'identity_provider', name: p.name })
      continue
    }
    const fields = changedFields(pick(have, SETTINGS), pick(p, SETTINGS))
    if (fields.length === 0) continue
    const input = body(fields)
    await storeStepAt(where, () => store.identityProviders.update(id, input as never, actorId))
    note({ action: 'update', kind: 'identity_provider', name: p.name, fields })
  }
}
