import { createLogger, type Demo, startDemo } from '@palisade/server'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AdminApiError, DEFAULT_SETUP, setupTenantPolicy } from '../src/setup-tenant-policy.js'

describe('setup-tenant-policy against a running demo', () => {
  let demo: Demo
  let baseUrl: string
  const clients: pg.Client[] = []
  /** The new user's connection, opened by the first test and kept for the later ones. */
  let carol: pg.Client
  /** Every request the script sends, as `METHOD /path -> status`. */
  const requests: string[] = []
  const recordingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    const url = new URL(String(input))
    requests.push(`${init?.method ?? 'GET'} ${url.pathname} -> ${res.status}`)
    return res
  }

  async function connect(username: string, password: string): Promise<pg.Client> {
    const { host, port } = demo.server.dataPlane
    const client = new pg.Client({ host, port, user: username, password, database: 'shop' })
    clients.push(client)
    await client.connect()
    return client
  }

  beforeAll(async () => {
    demo = await startDemo({ dataPort: 0, adminPort: 0, logger: createLogger({ level: 'silent' }) })
    baseUrl = demo.server.admin.url
    // Take the demo's own tenant filter away, so the only one left is the script's.
    const { store } = demo.server
    const shop = await store.datasources.findByName('shop')
    const admin = await store.users.findByUsername('admin')
    const isolation = (await store.assignments.list(shop!.id)).find(
      (a) => a.policy_name === 'tenant-isolation',
    )
    await store.assignments.unassign(shop!.id, isolation!.id, admin!.id)
  })
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.end()))
    await demo?.close()
  })

  it('creates the user, access, policy and assignment, and the user sees only their tenant', async () => {
    const steps = await setupTenantPolicy(baseUrl, demo.admin, recordingFetch)
    expect(steps.map((s) => `${s.action} ${s.what}`)).toEqual([
      'exists attribute definition tenant',
      'created user carol',
      'granted access to shop',
      'created policy tenant-rows',
      'created assignment of tenant-rows to carol',
    ])

    carol = await connect(DEFAULT_SETUP.username, DEFAULT_SETUP.password)
    const customers = await carol.query('SELECT id, tenant, email FROM customers ORDER BY id')
    expect(customers.rows).toEqual([
      { id: 3, tenant: 'globex', email: 'g***@globex.example' },
      { id: 4, tenant: 'globex', email: 'g***@globex.example' },
    ])
    const orders = await carol.query('SELECT id FROM orders ORDER BY id')
    expect(orders.rows).toEqual([{ id: 200 }, { id: 201 }])

    // alice keeps her access, and without the demo's filter she sees every tenant.
    const alice = await connect('alice', 'Demo-pass-1')
    const all = await alice.query('SELECT count(*)::int AS n FROM customers')
    expect(all.rows).toEqual([{ n: 4 }])
  })

  it('changes nothing when run again', async () => {
    const auditBefore = await demo.server.store.audit.admin.count()
    requests.length = 0
    const steps = await setupTenantPolicy(baseUrl, demo.admin, recordingFetch)
    expect(steps.map((s) => s.action)).toEqual(['exists', 'exists', 'exists', 'exists', 'exists'])
    expect(await demo.server.store.audit.admin.count()).toBe(auditBefore)
    expect(requests.filter((r) => r.startsWith('POST') || r.startsWith('PUT'))).toEqual([
      'POST /api/v1/auth/login -> 200',
      'POST /api/v1/attribute-definitions -> 409',
      'POST /api/v1/users -> 409',
      'POST /api/v1/policies -> 409',
      expect.stringMatching(/^POST \/api\/v1\/datasources\/[0-9a-f-]+\/policies -> 409$/),
    ])
  })

  it('moves an existing user to another tenant, which live sessions see at once', async () => {
    const steps = await setupTenantPolicy(baseUrl, demo.admin, fetch, {
      ...DEFAULT_SETUP,
      tenant: 'acme',
    })
    expect(steps.map((s) => s.action)).toEqual(['exists', 'updated', 'exists', 'exists', 'exists'])
    const orders = await carol.query('SELECT id FROM orders ORDER BY id')
    expect(orders.rows).toEqual([{ id: 100 }, { id: 101 }, { id: 102 }])
  })

  it('fails with the API error code when the admin password is wrong', async () => {
    const wrong = { username: 'admin', password: 'Not-the-pass-1' }
    const error = await setupTenantPolicy(baseUrl, wrong, fetch).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AdminApiError)
    expect(error).toMatchObject({ status: 401, code: 'invalid_credentials' })
  })
})
