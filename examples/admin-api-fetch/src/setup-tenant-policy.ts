/**
 * Onboards one tenant user through the Palisade admin API with nothing but `fetch`: log in,
 * make sure the `tenant` attribute exists, create the user with their tenant, grant them the
 * datasource, and assign them a row filter `tenant = {user.tenant}`. Safe to run again: every
 * step that finds its object already there (409 `already_exists`) reuses it.
 *
 * Run against `palisade demo` (the defaults) with `pnpm --filter admin-api-fetch dev`.
 */
import { pathToFileURL } from 'node:url'

/** An admin's login. */
export interface AdminCredentials {
  username: string
  password: string
}

/** What to set up; every field has a default that fits the demo's `shop`. */
export interface TenantUserSetup {
  /** Datasource name: the database clients connect to. */
  datasource: string
  username: string
  password: string
  /** The user's `tenant` attribute, compared with each row's `tenant` column. */
  tenant: string
  policyName: string
  /** Tables of schema `public` the row filter applies to; each needs a `tenant` column. */
  tables: string[]
}

export const DEFAULT_SETUP: TenantUserSetup = {
  datasource: 'shop',
  username: 'carol',
  password: 'Carol-pass-1',
  tenant: 'globex',
  policyName: 'tenant-rows',
  tables: ['tenants', 'customers', 'orders'],
}

/** One line of the report: what a step did. */
export interface Step {
  action: 'created' | 'exists' | 'updated' | 'granted'
  what: string
  id: string
}

/** A non-2xx answer, read from the admin API's one error envelope (admin-api 1.4). */
export class AdminApiError extends Error {
  readonly status: number
  readonly code: string
  readonly details: readonly { field: string; code: string; message: string }[]

  constructor(status: number, body: unknown) {
    const error = (body as { error?: Partial<AdminApiError> } | null)?.error
    super(`${status} ${error?.code ?? 'unknown'}: ${error?.message ?? 'no error body'}`)
    this.name = 'AdminApiError'
    this.status = status
    this.code = error?.code ?? 'unknown'
    this.details = error?.details ?? []
  }
}

interface Page<T> {
  data: T[]
}
interface Identified {
  id: string
}
interface User extends Identified {
  username: string
  attributes: Record<string, unknown>
}

/**
 * Runs the setup and returns what each step did.
 *
 * ```ts
 * const steps = await setupTenantPolicy('http://127.0.0.1:5435', { username: 'admin', password }, fetch)
 * ```
 */
export async function setupTenantPolicy(
  baseUrl: string,
  credentials: AdminCredentials,
  fetchFn: typeof fetch,
  setup: TenantUserSetup = DEFAULT_SETUP,
): Promise<Step[]> {
  const api = `${baseUrl.replace(/\/+$/, '')}/api/v1`
  let token: string | undefined

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {}
    if (token) headers['Authorization'] = `Bearer ${token}`
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    const res = await fetchFn(`${api}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    const json: unknown = text === '' ? null : JSON.parse(text)
    if (!res.ok) throw new AdminApiError(res.status, json)
    return json as T
  }

  /** POSTs a new object; on 409 `already_exists` returns `find()` instead. */
  async function createOrFind<T>(
    path: string,
    body: unknown,
    find: () => Promise<T | undefined>,
  ): Promise<{ created: boolean; value: T }> {
    try {
      return { created: true, value: await call<T>('POST', path, body) }
    } catch (error) {
      if (!(error instanceof AdminApiError) || error.code !== 'already_exists') throw error
      const value = await find()
      if (value === undefined) throw error
      return { created: false, value }
    }
  }

  const q = encodeURIComponent
  const steps: Step[] = []
  const step = (created: boolean, what: string, id: string) =>
    steps.push({ action: created ? 'created' : 'exists', what, id })

  // 1. Log in: POST /auth/login answers a bearer token.
  token = (await call<{ token: string }>('POST', '/auth/login', credentials)).token

  // 2. The attribute the filter reads as {user.tenant}.
  const attribute = await createOrFind<Identified & { key: string }>(
    '/attribute-definitions',
    { key: 'tenant', entity_type: 'user', value_type: 'string', display_name: 'Tenant' },
    async () => {
      const page = await call<Page<Identified & { key: string }>>(
        'GET',
        '/attribute-definitions?entity_type=user&search=tenant&page_size=200',
      )
      return page.data.find((d) => d.key === 'tenant')
    },
  )
  step(attribute.created, 'attribute definition tenant', attribute.value.id)

  // 3. The datasource, by exact name (`search` is a substring match).
  const datasources = await call<Page<Identified & { name: string }>>(
    'GET',
    `/datasources?search=${q(setup.datasource)}&page_size=100`,
  )
  const datasource = datasources.data.find((d) => d.name === setup.datasource)
  if (!datasource) throw new Error(`datasource "${setup.datasource}" not found`)

  // 4. The user, with their tenant; an existing user gets the tenant set if it differs.
  const user = await createOrFind<User>(
    '/users',
    {
      username: setup.username,
      password: setup.password,
      attributes: { tenant: setup.tenant },
    },
    async () => {
      const page = await call<Page<User>>('GET', `/users?search=${q(setup.username)}&page_size=100`)
      return page.data.find((u) => u.username === setup.username)
    },
  )
  const userId = user.value.id
  if (!user.created && user.value.attributes['tenant'] !== setup.tenant) {
    // `attributes` is replaced whole, so keep the user's other attributes.
    const attributes = { ...user.value.attributes, tenant: setup.tenant }
    await call('PUT', `/users/${userId}`, { attributes })
    steps.push({ action: 'updated', what: `user ${setup.username} (tenant)`, id: userId })
  } else {
    step(user.created, `user ${setup.username}`, userId)
  }

  // 5. Access: PUT replaces the datasource's whole user list, so add to what is there.
  const granted = await call<User[]>('GET', `/datasources/${datasource.id}/users`)
  if (granted.some((u) => u.id === userId)) {
    step(false, `access to ${setup.datasource}`, datasource.id)
  } else {
    const userIds = [...granted.map((u) => u.id), userId]
    await call('PUT', `/datasources/${datasource.id}/users`, { user_ids: userIds })
    steps.push({ action: 'granted', what: `access to ${setup.datasource}`, id: datasource.id })
  }

  // 6. The row filter; it does nothing until assigned.
  const policy = await createOrFind<Identified & { name: string }>(
    '/policies',
    {
      name: setup.policyName,
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: setup.tables }],
      filter_expression: 'tenant = {user.tenant}',
    },
    async () => {
      const page = await call<Page<Identified & { name: string }>>(
        'GET',
        `/policies?search=${q(setup.policyName)}&policy_type=row_filter&page_size=100`,
      )
      return page.data.find((p) => p.name === setup.policyName)
    },
  )
  step(policy.created, `policy ${setup.policyName}`, policy.value.id)

  // 7. Assign it to the user on the datasource (409 when that assignment exists).
  const assignment = await createOrFind<Identified>(
    `/datasources/${datasource.id}/policies`,
    { policy_id: policy.value.id, scope: 'user', user_id: userId },
    async () => {
      const list = await call<(Identified & { policy_id: string; user_id: string | null })[]>(
        'GET',
        `/datasources/${datasource.id}/policies`,
      )
      return list.find((a) => a.policy_id === policy.value.id && a.user_id === userId)
    },
  )
  step(
    assignment.created,
    `assignment of ${setup.policyName} to ${setup.username}`,
    assignment.value.id,
  )

  return steps
}

/** The command line: settings from the environment, defaults matching `palisade demo`. */
async function main(): Promise<void> {
  const env = process.env
  const baseUrl = env['PALISADE_ADMIN_URL'] ?? 'http://127.0.0.1:5435'
  const credentials = {
    username: env['PALISADE_ADMIN_USERNAME'] ?? 'admin',
    password: env['PALISADE_ADMIN_PASSWORD'] ?? 'Admin-demo-1',
  }
  const setup: TenantUserSetup = {
    datasource: env['DATASOURCE'] ?? DEFAULT_SETUP.datasource,
    username: env['TENANT_USER'] ?? DEFAULT_SETUP.username,
    password: env['TENANT_USER_PASSWORD'] ?? DEFAULT_SETUP.password,
    tenant: env['TENANT'] ?? DEFAULT_SETUP.tenant,
    policyName: env['POLICY_NAME'] ?? DEFAULT_SETUP.policyName,
    tables: env['TABLES']?.split(',').map((t) => t.trim()) ?? DEFAULT_SETUP.tables,
  }
  for (const s of await setupTenantPolicy(baseUrl, credentials, fetch, setup)) {
    console.log(`${s.action.padEnd(8)} ${s.what} (${s.id})`)
  }
  const host = new URL(baseUrl).hostname
  const port = env['PALISADE_PG_PORT'] ?? '5434'
  const url = `postgresql://${setup.username}:${encodeURIComponent(setup.password)}@${host}:${port}/${setup.datasource}`
  console.log(`\nTry: psql "${url}" -c "SELECT * FROM customers"`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  })
}
